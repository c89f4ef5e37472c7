"""Runs side by side (``/compare?runs=A,B``): per episode, each run's label and answer, who wins
against the first run by ToolEval's rules, and the first step where the two episodes differ.

An episode *differs* when the runs' labels or final answers are not all the same. The win/loss
of a run against the first one uses ``sandbox.eval.win_rate`` (rules only, no judge), on the
labels of ``scores.json`` (or live labels for runs not scored yet). May import
``sandbox.eval`` and the view modules below it.
"""

from __future__ import annotations

from collections import Counter
from typing import Literal

from pydantic import BaseModel, Field

from agents.trajectory import Trajectory
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.win_rate import compare_episode, episode_facts
from sandbox.store import EpisodeKey
from sandbox.view.catalog import RunEntry
from sandbox.view.episode_page import Difference, first_difference
from sandbox.view.run_page import RunState

__all__ = ["ComparePage", "CompareRow", "compare_page"]

Outcome = Literal["win", "loss", "tie"]
_OUTCOME: dict[str, Outcome] = {"candidate": "win", "reference": "loss", "tie": "tie"}


class CompareCell(BaseModel):
    label: str | None = None
    status: str = "missing"
    answer: str | None = None
    steps: int | None = None
    outcome: Outcome | None = Field(default=None, description="Against the first run.")
    rule: str | None = Field(default=None, description="The ToolEval rule that decided.")
    first_diff: Difference | None = Field(
        default=None, description="First step where this episode departs from the first run's."
    )


class CompareRow(BaseModel):
    task_id: str
    trial: int
    differs: bool
    cells: list[CompareCell]


class RunTally(BaseModel):
    key: str
    wins: int = 0
    losses: int = 0
    ties: int = 0


class ComparePage(BaseModel):
    runs: list[RunEntry]
    same_suite: bool
    rows: list[CompareRow]
    tallies: list[RunTally] = Field(description="Each run against the first one.")


def _cell(
    traj: Trajectory | None, label: EpisodeLabel | None, row_status: str, steps: int | None
) -> CompareCell:
    return CompareCell(
        label=label.label if label else None,
        status=traj.status.value if traj else row_status,
        answer=traj.final_answer if traj else None,
        steps=steps,
    )


def compare_page(states: list[RunState]) -> ComparePage:
    """Every episode of the runs, the first run being the one the others are measured against."""
    keys: list[EpisodeKey] = []
    status: list[dict[EpisodeKey, str]] = []
    for state in states:
        rows = state.rows()
        status.append({(r.task_id, r.trial): r.status for r in rows})
        keys.extend((r.task_id, r.trial) for r in rows)
    keys = list(dict.fromkeys(keys))
    out: list[CompareRow] = []
    for key in keys:
        trajs = [s.index.trajectory(key) for s in states]
        labels = [s.label(key) for s in states]
        cells = []
        for i, (traj, label) in enumerate(zip(trajs, labels, strict=True)):
            digest = states[i].index.get(key)
            cells.append(
                _cell(traj, label, status[i].get(key, "missing"), digest.steps if digest else None)
            )
        base_traj, base_label = trajs[0], labels[0]
        for i in range(1, len(states)):
            other = trajs[i]
            decided = compare_episode(
                episode_facts(other, labels[i]),
                episode_facts(base_traj, base_label),
                key[0],
                key[1],
            )
            cells[i].outcome = _OUTCOME[decided.winner]
            cells[i].rule = decided.rule
            if base_traj is not None and other is not None:
                cells[i].first_diff = first_difference(base_traj, other)
        differs = (
            len({c.label for c in cells}) > 1
            or len({(c.answer or "").strip() for c in cells}) > 1
            or len({c.status for c in cells}) > 1
        )
        out.append(CompareRow(task_id=key[0], trial=key[1], differs=differs, cells=cells))
    tallies = []
    for i, state in enumerate(states):
        counts = Counter(row.cells[i].outcome for row in out)
        tallies.append(
            RunTally(
                key=state.record.entry.key,
                wins=counts["win"],
                losses=counts["loss"],
                ties=counts["tie"],
            )
        )
    prints = {s.record.entry.suite_fingerprint for s in states}
    return ComparePage(
        runs=[s.record.entry for s in states],
        same_suite=len(prints) == 1,
        rows=out,
        tallies=tallies,
    )
