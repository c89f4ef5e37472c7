"""A counterfactual: replay the first K recorded steps of a path, then hand over to a live model.

"What would another model have done from here?" The recorded prefix is served by a
``ReplayModel`` over a trajectory cut to those K steps; every request whose history already
holds K assistant turns goes to ``live``.
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
        self.replay = ReplayModel(prefix_trajectory(trajectory, until_step))
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
        if len(assistant_turns(messages)) < self.until_step:
            return await self.replay.complete(messages, tools, params)
        return await self.live.complete(messages, tools, params)
