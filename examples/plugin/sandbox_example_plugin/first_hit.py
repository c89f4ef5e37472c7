"""``first-hit``: ReAct that answers with the first successful observation.

Written on the chain loop of ``agents`` (``Episode.step`` grows the chain one node at a time):
the loop of ReAct, with one more way to end.
"""

from __future__ import annotations

from agents.agent import BaseAgent, EpisodeMeta
from agents.budget import Budget
from agents.model import Model
from agents.options import AgentOptions
from agents.outcome import give_up_text
from agents.step import Episode
from agents.toolenv import ToolEnv
from agents.trajectory import Node, Status, Trajectory


class FirstHitOptions(AgentOptions):
    """The options every strategy takes, no more."""


def first_success(node: Node | None) -> str | None:
    """The content of the node's first call that was answered successfully, if any."""
    for call in node.calls if node is not None else []:
        if call.observation is not None and call.observation.ok:
            return call.observation.content
    return None


class FirstHit(BaseAgent[FirstHitOptions]):
    name = "first-hit"
    Options = FirstHitOptions

    async def run(
        self, *, model: Model, env: ToolEnv, query: str, budget: Budget, episode: EpisodeMeta
    ) -> Trajectory:
        ep = Episode.begin(
            self.name, self.options, model=model, env=env, query=query, budget=budget, meta=episode
        )
        last: Node | None = None
        while True:
            result = await ep.step(last.id if last else None)
            last = result.node or last
            path = [n.id for n in ep.path(last.id)] if last else []
            hit = first_success(result.node)
            if hit is not None:
                return ep.end(Status.answered, "first_hit", chosen_path=path, final_answer=hit)
            if result.stop is not None:
                return ep.end(result.stop.status, result.stop.reason, chosen_path=path)
            assert last is not None
            if last.kind == "finish" and last.finish is not None:
                final = last.finish.final_answer
                return ep.end(Status.answered, "answered", chosen_path=path, final_answer=final)
            if last.kind == "give_up":
                gave_up = give_up_text(last)
                return ep.end(Status.gave_up, "gave_up", chosen_path=path, final_answer=gave_up)
            if budget.max_depth is not None and ep.level(last) >= budget.max_depth:
                return ep.end(Status.budget_exhausted, "budget:max_depth", chosen_path=path)
