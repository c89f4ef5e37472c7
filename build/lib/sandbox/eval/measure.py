"""``Measure``: a step-level score in [0, 1] together with how many units it averages.

Every step-level dimension is reported as a ``Measure``: ``value`` is None when the dimension does
not apply to the episode (no reference steps, no errors to recover from...), and ``n`` is the
number of units (turns, argument values, matched steps...) the value was computed over, so a
reader can tell 1.0 over one turn from 1.0 over fifty.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

__all__ = ["Measure", "f1", "mean_measure", "ratio"]


class Measure(BaseModel):
    value: float | None = Field(default=None, description="In [0, 1]; None when not applicable.")
    n: int = Field(default=0, ge=0, description="Units the value is computed over.")

    @property
    def applicable(self) -> bool:
        return self.value is not None


def ratio(hits: float, total: int) -> Measure:
    """``hits / total``; not applicable when there is nothing to count."""
    return Measure(value=hits / total, n=total) if total > 0 else Measure(value=None, n=0)


def mean_measure(values: Iterable[float]) -> Measure:
    """The mean of per-unit values; not applicable when there are none."""
    items = list(values)
    return Measure(value=sum(items) / len(items), n=len(items)) if items else Measure()


def f1(precision: float, recall: float) -> float:
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)
