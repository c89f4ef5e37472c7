"""PNG plots of a run or a comparison, with matplotlib's object API (Agg, no pyplot state).

Imports matplotlib; nothing imports it but the report writers.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from sandbox.eval.stats import Interval

_METADATA = {"Software": None}


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=110, metadata=_METADATA)
    return path


def _errors(intervals: Sequence[Interval]) -> list[list[float]]:
    return [
        [max(0.0, i.value - i.low) for i in intervals],
        [max(0.0, i.high - i.value) for i in intervals],
    ]


def plot_rates(
    entries: Sequence[tuple[str, Interval]], path: Path, *, title: str, ylabel: str = "pass rate"
) -> Path:
    """Bars with 95% interval whiskers and ``n`` under each label (per group, run or model)."""
    fig = Figure(figsize=(max(4.0, 0.9 * len(entries) + 2), 3.6))
    ax = fig.add_subplot()
    labels = [f"{name}\n(n={iv.n})" for name, iv in entries]
    values = [iv.value for _, iv in entries]
    ax.bar(labels, values, yerr=_errors([iv for _, iv in entries]), capsize=4, color="#4C72B0")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    return _save(fig, path)


def plot_step_profile(profile: Sequence[tuple[str, Interval]], path: Path, *, title: str) -> Path:
    """Horizontal bars, one per step-level dimension that applies, with intervals."""
    fig = Figure(figsize=(6.0, 0.35 * len(profile) + 1.4))
    ax = fig.add_subplot()
    names = [f"{name} (n={iv.n})" for name, iv in profile]
    values = [iv.value for _, iv in profile]
    ax.barh(names, values, xerr=_errors([iv for _, iv in profile]), capsize=3, color="#55A868")
    ax.invert_yaxis()
    ax.set_xlim(0, 1.05)
    ax.set_title(title)
    ax.grid(axis="x", alpha=0.3)
    return _save(fig, path)


def plot_cost_vs_pass(
    points: Sequence[tuple[str, float, Interval]], path: Path, *, xlabel: str, title: str
) -> Path:
    """One point per run (or group): cost on x, pass rate with its interval on y."""
    fig = Figure(figsize=(5.0, 3.8))
    ax = fig.add_subplot()
    for name, cost, iv in points:
        ax.errorbar(
            [cost], [iv.value], yerr=_errors([iv]), fmt="o", capsize=4, label=f"{name} (n={iv.n})"
        )
    ax.set_ylim(0, 1.05)
    ax.set_xlabel(xlabel)
    ax.set_ylabel("pass rate")
    ax.set_title(title)
    ax.grid(alpha=0.3)
    if points:
        ax.legend(fontsize=8, loc="best")
    return _save(fig, path)
