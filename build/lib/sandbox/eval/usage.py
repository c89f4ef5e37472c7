"""What the agents consumed over a run: calls, tokens, cost, time (the judge's is apart).

Imports ``agents.trajectory`` only.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from agents.trajectory import EpisodeUsage, Trajectory

__all__ = ["UsageTotals"]


class UsageTotals(EpisodeUsage):
    """The usage of a run's episodes added up, with how many episodes and steps they were."""

    episodes: int = 0
    steps: int = Field(default=0, description="Tree nodes (assistant turns) over all episodes.")

    @classmethod
    def of(cls, trajectories: Sequence[Trajectory]) -> UsageTotals:
        out = cls(episodes=len(trajectories))
        for t in trajectories:
            out.add(t.usage)
            out.steps += len(t.nodes)
        return out
