"""A counterfactual: replay the first K recorded steps of a path, then hand over to a live model.

"What would another model have done from here?" The recorded prefix is served by a
``ReplayModel`` over a trajectory cut to those K steps; every request whose history already
holds the prefix's assistant turns (its steps but the user's answers of a conversation) goes to
``live``.
"""

from __future__ import annotations

from typing import Any

from agents.model import Message, Model, Turn
from agents.models.history import assistant_turns
from agents.models.replay import ReplayModel
from agents.trajectory import Trajectory


def prefix_trajectory(trajectory: Trajectory, until_step: int) -> Trajectory:
    """The trajectory cut to the first ``until_step`` nodes of its chosen path."""
    keep = trajectory.chosen_path[:until_step]
    nodes = [trajectory.nodes[i] for i in keep]
    return trajectory.model_copy(update={"nodes": nodes, "chosen_path": keep})


class ForkModel:
    def __init__(self, trajectory: Trajectory, until_step: int, live: Model) -> None:
        if until_step < 0:
            raise ValueError("until_step must be >= 0")
        steps = len(trajectory.chosen_path)
        if until_step > steps:
            raise ValueError(f"the recorded path has only {steps} steps (asked for {until_step})")
        self.until_step = until_step
        self.live = live
        prefix = prefix_trajectory(trajectory, until_step)
        self.turns = sum(1 for n in prefix.nodes if n.kind != "user")
        """The model's turns among the prefix's steps (a conversation's user nodes are steps of
        the path, answered by the episode's user, not turns of the model)."""
        self.replay = ReplayModel(prefix)
        self.name = f"fork({until_step} steps of {trajectory.model.name} -> {live.name})"

    @property
    def params(self) -> dict[str, Any]:
        return {"until_step": self.until_step, "live": self.live.name}

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        if len(assistant_turns(messages)) < self.turns:
            return await self.replay.complete(messages, tools, params)
        return await self.live.complete(messages, tools, params)
