"""ReAct@N: up to N independent ReAct chains under one shared budget, until one answers.

The equal-cost baseline of the ToolLLM paper. Every chain starts again from the prompt: its first
node is a root-level node (``parent`` is ``None``), so the trajectory is a forest of N chains
and ``trajectory.children(None)`` lists the chains' first steps. No diversity prompt is added:
chains are independent draws, and a seeded offline model tells them apart by how many times it
has been asked the same history (the attempt).

A chain ends on Finish (the episode is answered), on a give-up or on the depth limit (the next
chain starts), or on budget exhaustion (the episode ends). A model failure ends the episode, or,
with ``on_model_error = "prune"``, only its chain (ToolBench's ``CoT@N``: a failed call ends that
try). With N chains spent and no answer the status is ``gave_up`` (``end_reason =
"chains_exhausted"``) and the chosen path follows ``agents.outcome``.
Imports ``agents.react`` and the shared step; never ``sandbox`` or ``mock_tools``.
"""

from __future__ import annotations

from pydantic import Field

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.options import AgentOptions, ModelErrorPolicy
from agents.outcome import fallback_outcome
from agents.react import run_chain
from agents.step import Episode
from agents.toolenv import ToolEnv
from agents.trajectory import Status, Trajectory

DEFAULT_N = 4


class ReActAtNOptions(AgentOptions):
    n: int = Field(default=DEFAULT_N, ge=1, description="Independent chains at most.")
    on_model_error: ModelErrorPolicy = Field(
        default="stop",
        description="A failed model call: stop the episode, or prune that branch and go on.",
    )


class ReActAtN(BaseAgent[ReActAtNOptions]):
    """Up to N ReAct chains (``react@4`` in a run's config)."""

    name = "react@n"
    Options = ReActAtNOptions

    async def run(
        self,
        *,
        model: Model,
        env: ToolEnv,
        query: str,
        budget: Budget,
        episode: EpisodeMeta,
    ) -> Trajectory:
        ep = Episode.begin(
            self.name, self.options, model=model, env=env, query=query, budget=budget, meta=episode
        )
        chain_ends: list[str] = []
        for _ in range(self.options.n):
            end = await run_chain(ep, max_depth=budget.max_depth)
            chain_ends.append(end.outcome)
            tree = {
                "chains": len(chain_ends),
                "chain_ends": chain_ends,
                "nodes": len(ep.trajectory.nodes),
            }
            if end.outcome == "answered":
                assert end.last is not None and end.last.finish is not None
                tree["end"] = "answer_found"
                return ep.end(
                    Status.answered,
                    "answered",
                    chosen_path=[n.id for n in ep.path(end.last.id)],
                    final_answer=end.last.finish.final_answer,
                    tree=tree,
                )
            prune = end.outcome == "model_error" and self.options.on_model_error == "prune"
            if end.stop is not None and not prune:
                tree["end"] = "budget" if end.stop.status is Status.budget_exhausted else "error"
                return ep.end(
                    end.stop.status,
                    end.stop.reason,
                    chosen_path=fallback_outcome(ep.trajectory)[0],
                    tree=tree,
                )
        path, final = fallback_outcome(ep.trajectory)
        tree = {
            "chains": len(chain_ends),
            "chain_ends": chain_ends,
            "nodes": len(ep.trajectory.nodes),
            "end": "tree_exhausted",
        }
        return ep.end(
            Status.gave_up,
            "chains_exhausted",
            chosen_path=path,
            final_answer=final,
            tree=tree,
        )
