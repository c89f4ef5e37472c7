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
"chains_exhausted"``) and the chosen path follows ``agents.outcome``; a stop keeps that chosen
path without a final answer. Each chain is ``agents.chain.run_chain`` with this agent as its
hooks, as in ReAct. Imports the chain loop and the agents' records; never ``sandbox`` or
``mock_tools``.
"""

from __future__ import annotations

from pydantic import Field

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.chain import ChainHooks, run_chain
from agents.model import Model
from agents.options import AgentOptions, ModelErrorPolicy
from agents.outcome import ChainEnd, episode_end, fallback_end, fallback_path
from agents.step import Episode, EpisodeEnd
from agents.toolenv import ToolEnv
from agents.trajectory import Status, Trajectory

DEFAULT_N = 4


class ReActAtNOptions(AgentOptions):
    n: int = Field(default=DEFAULT_N, ge=1, description="Independent chains at most.")
    on_model_error: ModelErrorPolicy = Field(
        default="stop",
        description="A failed model call: stop the episode, or prune that branch and go on.",
    )


class ReActAtN(ChainHooks, BaseAgent[ReActAtNOptions]):
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
        end: EpisodeEnd | None = None
        while end is None and len(chain_ends) < self.options.n:
            chain = await run_chain(ep, max_depth=budget.max_depth, hooks=self)
            chain_ends.append(chain.outcome)
            end = self._verdict(ep.trajectory, chain)
        if end is None:
            end = fallback_end(ep.trajectory, Status.gave_up, "chains_exhausted")
        tree = {
            "chains": len(chain_ends),
            "chain_ends": chain_ends,
            "nodes": len(ep.trajectory.nodes),
            "end": end.tree_end,
        }
        return ep.close(end, tree=tree)

    def _verdict(self, trajectory: Trajectory, chain: ChainEnd) -> EpisodeEnd | None:
        """The episode's end after ``chain``, or ``None`` when the next chain starts."""
        if chain.outcome == "answered":
            return episode_end(trajectory, chain)
        prune = chain.outcome == "model_error" and self.options.on_model_error == "prune"
        if chain.stop is None or prune:
            return None
        return EpisodeEnd(chain.stop.status, chain.stop.reason, fallback_path(trajectory))
