"""Pairwise statistics of a comparison: the win-rate matrix and exact McNemar tests.

The win-rate matrix is the evaluation protocol's (``sandbox.eval.protocols``): for every pair of
runs, in the order given, the later run is the candidate and the earlier the reference
(``protocol.prefer``); the mirror cell is the same judgments seen from the other side
(``win_rate.mirror``), so each pair is judged once. McNemar is computed from the runs' labels on
the same (task, trial) episodes; a missing episode counts as unsolved on its side, an episode
whose label the protocol left out (a judge error, a dropped answer) takes no part.
May import ``sandbox.eval`` only.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations

from pydantic import BaseModel, Field

from mock_tools import Task
from sandbox.eval.judge import Judge
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.protocol import EvalProtocol, JudgeSettings
from sandbox.eval.stats import Interval, mcnemar_exact
from sandbox.eval.win_rate import PairOutcome, RunSide, WinSummary, mirror

__all__ = ["PairedComparison", "WinCell", "paired_tests", "win_cells"]


class WinCell(BaseModel):
    """The row run as candidate against the column run, under the comparison's protocol."""

    wins: int
    losses: int
    ties: int
    win_rate: Interval = Field(description="The protocol's win rate (default: ties as half).")
    tooleval_win_rate: float = Field(description="Ties as 0 (ToolEval's definition).")
    tie_rate: float = 0.0
    tie_value: float = Field(default=0.5, description="What a tie counts in win_rate.")
    judge_errors: int = 0

    @classmethod
    def of(cls, w: WinSummary) -> WinCell:
        return cls(
            wins=w.wins,
            losses=w.losses,
            ties=w.ties,
            win_rate=w.win_rate,
            tooleval_win_rate=w.tooleval_win_rate.value,
            tie_rate=w.tie_rate,
            tie_value=w.tie_value,
            judge_errors=len(w.judge_errors),
        )


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


async def win_cells(
    protocol: EvalProtocol,
    sides: Sequence[RunSide],
    tasks: Sequence[Task],
    judge: Judge | None,
    settings: JudgeSettings,
    *,
    seed: int = 0,
) -> tuple[dict[str, dict[str, WinCell]], list[PairOutcome]]:
    """``cells[row][col]`` (row as candidate against col) and every outcome judged (each pair
    once, later run as candidate)."""
    cells: dict[str, dict[str, WinCell]] = {s.name: {} for s in sides}
    judged: list[PairOutcome] = []
    for ref, cand in combinations(sides, 2):
        outcomes = await protocol.prefer(cand, ref, tasks, judge, settings, seed=seed)
        judged.extend(outcomes)
        forward = protocol.summarise_wins(
            outcomes, candidate=cand.name, reference=ref.name, seed=seed
        )
        backward = protocol.summarise_wins(
            [mirror(o) for o in outcomes], candidate=ref.name, reference=cand.name, seed=seed
        )
        cells[cand.name][ref.name] = WinCell.of(forward)
        cells[ref.name][cand.name] = WinCell.of(backward)
    return cells, judged


def paired_tests(
    labels: Sequence[tuple[str, Sequence[EpisodeLabel]]], tasks: Sequence[Task]
) -> list[PairedComparison]:
    """McNemar for every pair of strategies, over the union of their episodes."""
    task_ids = {t.id for t in tasks}
    solved = {
        name: {(lb.task_id, lb.trial): lb.label == "solved" for lb in ls if lb.task_id in task_ids}
        for name, ls in labels
    }
    left_out = {
        name: {(lb.task_id, lb.trial) for lb in ls if lb.excluded is not None}
        for name, ls in labels
    }
    out: list[PairedComparison] = []
    for (a, _), (b, _) in combinations(labels, 2):
        keys = sorted((set(solved[a]) | set(solved[b])) - left_out[a] - left_out[b])
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
