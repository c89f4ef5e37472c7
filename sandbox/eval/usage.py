"""What the agents consumed over a run: calls, tokens, cost, time (the judge's is apart).

Imports ``agents.trajectory`` only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import Field

from agents.trajectory import EpisodeUsage, Trajectory

__all__ = ["USAGE_TYPES", "UsageTotals", "counts"]


class UsageTotals(EpisodeUsage):
    """The usage of a run's episodes added up, with how many episodes and steps they were."""

    episodes: int = 0
    steps: int = Field(default=0, description="Tree nodes (assistant turns) over all episodes.")

    @classmethod
    def of(cls, trajectories: Sequence[Trajectory]) -> UsageTotals:
        return cls.of_counts([(counts(t.usage), len(t.nodes)) for t in trajectories])

    @classmethod
    def of_counts(cls, episodes: Iterable[tuple[tuple[int | float, ...], int]]) -> UsageTotals:
        """The totals of episodes given as ``(counts(usage), steps)``, added in that order."""
        out = cls()
        for values, steps in episodes:
            out.episodes += 1
            for name, value in zip(_FIELDS, values, strict=True):
                setattr(out, name, getattr(out, name) + value)
            out.steps += steps
        return out


_FIELDS = tuple(EpisodeUsage.model_fields)
USAGE_TYPES: tuple[Any, ...] = tuple(f.annotation for f in EpisodeUsage.model_fields.values())
"""The type of each usage count, in ``counts``' order."""


def counts(usage: EpisodeUsage) -> tuple[int | float, ...]:
    """An episode's usage as a tuple of its fields' values (what a long run keeps of it)."""
    return tuple(getattr(usage, name) for name in _FIELDS)
