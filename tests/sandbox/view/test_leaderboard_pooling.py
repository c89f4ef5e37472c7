"""The figures of a leaderboard row that pools runs, each against a plausible one-line slip.

What it protects (``sandbox.view.pooling``, ``sandbox.view.leaderboard``):
- a pooled row's pass rate leaves out the episodes that do not count (an infrastructure error,
  a judge error) and says what it left out, by reason;
- an identical seeded repeat (same seed, task and trial) counts from the newest run, and the
  older run is the one named as repeating it;
- step scores are pooled as means weighted by each run's episode count;
- rows with equal pass rates rank the higher win rate first.

The runs are copies of the session's ReAct run with their ``scores.json`` and manifest edited,
so each figure is known by construction.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from conftest import TASKS, ViewRuns, copy_run

from sandbox.cli import main
from sandbox.view.leaderboard import LeaderboardRow, _rank


def _edit(run: Path, name: str, change: Any) -> None:
    data = json.loads((run / name).read_text())
    change(data)
    (run / name).write_text(json.dumps(data))


def _copy(
    runs: ViewRuns, root: Path, name: str, *, seed: int, started: str, scores: list[float]
) -> Path:
    """A copy of the ReAct run with this seed and start time, its labels scored ``scores``
    (in task order)."""
    run = copy_run(runs, runs.react, root, name)

    def manifest(m: dict) -> None:
        m["seed"], m["started_at"] = seed, started

    def labels(s: dict) -> None:
        by_task = {lb["task_id"]: lb for lb in s["labels"]}
        for task, score in zip(TASKS, scores, strict=True):
            by_task[task]["score"] = score
            by_task[task]["label"] = "solved" if score == 1.0 else "unsolved"

    _edit(run, "manifest.json", manifest)
    _edit(run, "scores.json", labels)
    return run


def _row(capsys: pytest.CaptureFixture[str], root: Path) -> dict:
    assert main(["leaderboard", "--runs-dir", str(root), "--json"]) == 0
    (row,) = json.loads(capsys.readouterr().out)
    return row


def _exclude(run: Path, task: str, reason: str) -> None:
    def change(s: dict) -> None:
        (lb,) = [lb for lb in s["labels"] if lb["task_id"] == task]
        lb["excluded"] = reason
        lb["infra_error"] = reason == "infra"

    _edit(run, "scores.json", change)


def test_a_pooled_row_leaves_out_infra_and_judge_errors_and_says_so(
    view_runs: ViewRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    root = tmp_path / "runs"
    a = _copy(view_runs, root, "a", seed=0, started="2026-01-01T00:00:00Z", scores=[0, 1, 1, 1])
    b = _copy(view_runs, root, "b", seed=1, started="2026-01-02T00:00:00Z", scores=[1, 0, 1, 1])
    _exclude(a, TASKS[0], "infra")  # a failure that is the harness's, not the agent's
    _exclude(b, TASKS[1], "judge_error")
    row = _row(capsys, root)
    assert row["episodes"] == 8 and row["n"] == 6
    assert row["pass_rate"] == pytest.approx(1.0)  # the six that count all passed
    assert row["excluded"] == {"infra": 1, "judge_error": 1}
    assert row["headline"]["excluded"] == {"infra": 1, "judge_error": 1}
    assert row["infra_errors"] == 1


def test_an_identical_seeded_repeat_counts_from_the_newest_run(
    view_runs: ViewRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    root = tmp_path / "runs"
    old = _copy(view_runs, root, "old", seed=5, started="2026-01-01T00:00:00Z", scores=[0] * 4)
    new = _copy(view_runs, root, "new", seed=5, started="2026-01-02T00:00:00Z", scores=[1] * 4)

    def first_two(s: dict) -> None:  # the newer run repeated two of the four samples
        s["labels"] = [lb for lb in s["labels"] if lb["task_id"] in TASKS[:2]]

    _edit(new, "scores.json", first_two)
    row = _row(capsys, root)
    assert row["repeats"] == [str(old)]
    assert row["episodes"] == 4 and row["samples"] == 1
    assert row["pass_rate"] == pytest.approx(0.5)  # the newer run's two passes, the older's rest
    assert row["runs"] and str(new) in row["runs"]


def test_step_scores_pool_weighted_by_episodes(
    view_runs: ViewRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    root = tmp_path / "runs"
    a = _copy(view_runs, root, "a", seed=0, started="2026-01-01T00:00:00Z", scores=[1] * 4)
    b = _copy(view_runs, root, "b", seed=1, started="2026-01-02T00:00:00Z", scores=[1] * 4)

    def instruct(value: float, n: int) -> Any:
        def change(s: dict) -> None:
            iv = s["step_scores"]["intervals"]["instruct"]
            iv.update(value=value, low=value, high=value, n=n)

        return change

    _edit(a, "scores.json", instruct(1.0, 3))
    _edit(b, "scores.json", instruct(0.0, 1))
    row = _row(capsys, root)
    assert row["step_scores"]["instruct"] == pytest.approx(0.75)  # (1.0 * 3 + 0.0 * 1) / 4


def _ranked(model: str, pass_rate: float, win_rate: float | None) -> LeaderboardRow:
    return LeaderboardRow(
        rank=0,
        suite="s",
        suite_fingerprint="f",
        model=model,
        agent="react",
        runs=[model],
        keys=[model],
        episodes=4,
        tasks=4,
        trials=1,
        pass_rate=pass_rate,
        pass_rate_ci=None,
        win_rate=win_rate,
        cost_usd=0.0,
        tokens=0.0,
        model_calls=0.0,
        tool_calls=0.0,
    )


def test_equal_pass_rates_rank_the_higher_win_rate_first() -> None:
    rows = [
        _ranked("a-low", 0.5, 0.2),
        _ranked("b-none", 0.5, None),  # no win rate ranks as an even one
        _ranked("c-high", 0.5, 0.9),
        _ranked("d-best", 0.75, 0.1),
    ]
    _rank(rows)
    assert [(r.model, r.rank) for r in rows] == [
        ("d-best", 1),
        ("c-high", 2),
        ("b-none", 3),
        ("a-low", 4),
    ]
