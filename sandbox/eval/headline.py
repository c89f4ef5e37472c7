"""A run's headline: its pass rate, the episodes it counts, its interval and what was left out.

Every place that shows a run's pass rate reads it through ``headline``: ``sandbox run``'s and
``sandbox eval``'s tables and ``--json`` lines, ``report.md``, ``sandbox compare``, the
leaderboard and the viewer. So they show the same figure over the same episodes with the same
interval: the one ``scores.json`` holds (``pass_rate``: the mean over the episodes that count,
``pass_rate.counts``, with its task-clustered bootstrap interval). A rate over no episode is no
number: ``pass_rate`` is ``None`` (``null`` in JSON) and the text ``n/a``, never ``0.0%``.
Pure; imports ``eval.pass_rate`` and ``eval.stats`` only.
"""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import BaseModel, Field

from sandbox.eval.pass_rate import PassSummary, RateSummary
from sandbox.eval.stats import Interval

__all__ = ["NOT_AVAILABLE", "Headline", "headline", "rate_cell", "rate_or_none"]

NOT_AVAILABLE = "n/a"
"""What a rate over no episode shows."""


class Headline(BaseModel):
    """A pass rate as every output shows it."""

    pass_rate: float | None = Field(description="The rate; None when no episode counts.")
    low: float | None = Field(description="Its 95% interval's low end (None when n is 0).")
    high: float | None = Field(description="Its 95% interval's high end (None when n is 0).")
    n: int = Field(description="The episodes the rate is over.")
    excluded: dict[str, int] = Field(
        default_factory=dict, description="Episodes left out of the rate, by reason."
    )
    text: str = Field(description="The rate as tables show it: '87.9% [79.3, 94.8]' or 'n/a'.")


def rate_or_none(iv: Interval) -> float | None:
    """The interval's value, or None when it is over no episode."""
    return iv.value if iv.n > 0 else None


def rate_cell(iv: Interval) -> str:
    """A rate with its interval in percent (``87.9% [79.3, 94.8]``), or ``n/a`` over nothing."""
    if iv.n == 0:
        return NOT_AVAILABLE
    return f"{100 * iv.value:.1f}% [{100 * iv.low:.1f}, {100 * iv.high:.1f}]"


def headline(
    summary: PassSummary | RateSummary, *, excluded: Mapping[str, int] | None = None
) -> Headline:
    """The headline of a pass-rate summary (a run's, a group's, or a pooled one); what a
    ``PassSummary`` left out is counted from it, ``excluded`` gives it for the others."""
    iv = summary.pass_rate
    some = iv.n > 0
    if excluded is None:
        left_out = getattr(summary, "excluded", {})
        excluded = {reason: len(episodes) for reason, episodes in left_out.items()}
    return Headline(
        pass_rate=iv.value if some else None,
        low=iv.low if some else None,
        high=iv.high if some else None,
        n=iv.n,
        excluded=dict(excluded),
        text=rate_cell(iv),
    )
