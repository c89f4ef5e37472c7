"""Pairwise statistics of a comparison: the win-rate matrix and exact McNemar tests.

Both are computed from the strategies' labels and trajectories on the same (task, trial)
episodes; a missing episode counts as unsolved on its side.
Pure; may import ``sandbox.eval`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from pydantic import BaseModel

from mock_tools import Task
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.stats import Interval, mcnemar_exact
from sandbox.eval.win_rate import RunSide, win_matrix

__all__ = ["PairedComparison", "WinCell", "paired_tests", "win_cells"]


class WinCell(BaseModel):
    """The row strategy as candidate against the column strategy (ToolEval's rules)."""

    wins: int
    losses: int
    ties: int
    win_rate: Interval
    tooleval_win_rate: float


class PairedComparison(BaseModel):
    """Exact McNemar test of two strategies' solved/unsolved outcomes on the same episodes."""

    a: str
    b: str
    n: int
    only_a: int
    only_b: int
    both: int
    neither: int
    p_value: float


def win_cells(
    sides: Sequence[RunSide], tasks: Sequence[Task], *, seed: int = 0
) -> dict[str, dict[str, WinCell]]:
    matrix = win_matrix(sides, tasks, seed=seed)
    return {
        row: {
            col: WinCell(
                wins=w.wins,
                losses=w.losses,
                ties=w.ties,
                win_rate=w.win_rate,
                tooleval_win_rate=w.tooleval_win_rate.value,
            )
            for col, w in cols.items()
        }
        for row, cols in matrix.items()
    }


def paired_tests(
    labels: Sequence[tuple[str, Sequence[EpisodeLabel]]], tasks: Sequence[Task]
) -> list[PairedComparison]:
    """McNemar for every pair of strategies, over the union of their episodes."""
    task_ids = {t.id for t in tasks}
    solved = {
        name: {(lb.task_id, lb.trial): lb.label == "solved" for lb in ls if lb.task_id in task_ids}
        for name, ls in labels
    }
    out: list[PairedComparison] = []
    for (a, _), (b, _) in combinations(labels, 2):
        keys = sorted(set(solved[a]) | set(solved[b]))
        test = mcnemar_exact(
            [solved[a].get(k, False) for k in keys], [solved[b].get(k, False) for k in keys]
        )
        out.append(
            PairedComparison(
                a=a,
                b=b,
                n=len(keys),
                only_a=test.only_a,
                only_b=test.only_b,
                both=test.both,
                neither=test.neither,
                p_value=test.p_value,
            )
        )
    return out
