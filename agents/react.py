"""ReAct: one chain of steps, ending on Finish, give-up, budget, depth limit or model error.

A chain follows ToolBench's ``single_chain`` (its ``CoT`` method): thoughts and invalid turns stay
in the chain; a node whose depth (in the options' ``depth_unit``) reaches ``max_depth`` without
an answer ends it. Imports the shared step (``agents.step``) and the agents' records; never
``sandbox`` or ``mock_tools``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.options import AgentOptions
from agents.outcome import give_up_text
from agents.step import Episode, Stop
from agents.toolenv import ToolEnv
from agents.trajectory import Node, Status, Trajectory

ChainOutcome = Literal["answered", "gave_up", "depth_limit", "model_error", "stopped"]


@dataclass(frozen=True)
class ChainEnd:
    """How one chain ended: its last node (if any) and, when stopped, why."""

    outcome: ChainOutcome
    last: Node | None
    stop: Stop | None = None


async def run_chain(episode: Episode, *, max_depth: int | None) -> ChainEnd:
    """Grow one root-level chain until it finishes, gives up, reaches ``max_depth`` or must stop.

    Thoughts and invalid turns stay in the chain. A node whose depth reaches ``max_depth``
    without finishing ends the chain (``depth_limit``). A failed model call ends it with
    ``model_error`` (its ``stop`` says why; the caller decides whether the episode goes on).
    """
    last: Node | None = None
    while True:
        result = await episode.step(last.id if last else None)
        if result.node is not None:
            last = result.node
        if result.stop is not None:
            failed = last is not None and last.kind == "error" and last is result.node
            return ChainEnd("model_error" if failed else "stopped", last, result.stop)
        assert last is not None
        if last.kind == "finish":
            return ChainEnd("answered", last)
        if last.kind == "give_up":
            return ChainEnd("gave_up", last)
        if max_depth is not None and episode.level(last) >= max_depth:
            return ChainEnd("depth_limit", last)


class ReActOptions(AgentOptions):
    """ReAct takes the shared options only."""


class ReActAgent(BaseAgent[ReActOptions]):
    """One chain (ToolBench's CoT/ReAct baseline)."""

    name = "react"
    Options = ReActOptions

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
        end = await run_chain(ep, max_depth=budget.max_depth)
        path = [n.id for n in ep.path(end.last.id)] if end.last else []
        if end.outcome == "answered":
            assert end.last is not None and end.last.finish is not None
            return ep.end(
                Status.answered,
                "answered",
                chosen_path=path,
                final_answer=end.last.finish.final_answer,
            )
        if end.outcome == "gave_up":
            return ep.end(
                Status.gave_up, "gave_up", chosen_path=path, final_answer=give_up_text(end.last)
            )
        if end.outcome == "depth_limit":
            return ep.end(Status.budget_exhausted, "budget:max_depth", chosen_path=path)
        assert end.stop is not None
        return ep.end(end.stop.status, end.stop.reason, chosen_path=path)
