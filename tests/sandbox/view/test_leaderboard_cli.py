"""``sandbox leaderboard`` over runs made in the test: the rows, the reference, pooling runs of
one (suite, model, agent), suites ranked apart, and the ways it refuses bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from conftest import TASKS, ViewRuns, copy_run, make_run

from sandbox.cli import main

MINI = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "mini"


def _board(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[list[dict], str]:
    """The rows ``--json`` prints, and what went to stderr."""
    assert main(["leaderboard", *argv, "--json"]) == 0
    out = capsys.readouterr()
    return json.loads(out.out), out.err


def _rows(capsys: pytest.CaptureFixture[str], *argv: str) -> list[dict]:
    return _board(capsys, *argv)[0]


def test_three_runs_give_one_row_each(view_runs: ViewRuns, capsys: pytest.CaptureFixture) -> None:
    keys = [view_runs.dfsdt, view_runs.react, view_runs.reference]
    rows = _rows(capsys, *(str(view_runs.path(k)) for k in keys))
    assert len(rows) == 3
    by_agent_model = {(r["agent"], r["model"]): r for r in rows}
    assert set(by_agent_model) == {
        ("dfsdt", "noisy-reference:0.5"),
        ("react", "noisy-reference:0.5"),
        ("react", "reference"),
    }
    for key in keys:
        row = next(r for r in rows if r["runs"] == [str(view_runs.path(key))])
        scores = view_runs.scores(key)
        rate = scores["pass_rate"]["pass_rate"]
        usage = scores["usage"]
        assert row["suite"] == "default" and row["episodes"] == row["tasks"] == len(TASKS)
        assert row["trials"] == 1 and row["pass_at_k"] == {}
        assert row["pass_rate"] == pytest.approx(rate["value"])
        assert row["pass_rate_ci"] == pytest.approx([rate["low"], rate["high"]])
        assert row["cost_usd"] == pytest.approx(usage["cost"] / len(TASKS))
        assert row["model_calls"] == pytest.approx(usage["model_calls"] / len(TASKS))
        assert row["tool_calls"] == pytest.approx(usage["tool_calls"] / len(TASKS))
        tokens = usage["prompt_tokens"] + usage["completion_tokens"]
        assert row["tokens"] == pytest.approx(tokens / len(TASKS))
        assert row["win_rate"] is None and row["step_scores"]["instruct"] > 0
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert rows[-1]["agent"] == "react" and rows[-1]["model"] == "noisy-reference:0.5"
    assert rows[-1]["pass_rate"] == 0.75  # it gave up on the date-format task


def test_win_and_tie_rate_against_a_reference(
    view_runs: ViewRuns, capsys: pytest.CaptureFixture
) -> None:
    ref = str(view_runs.path(view_runs.reference))
    rows = _rows(capsys, "--runs-dir", str(view_runs.root), "--reference", ref)
    (reference,) = [r for r in rows if r["is_reference"]]
    assert reference["runs"] == [ref] and reference["win_rate"] is None
    react = next(r for r in rows if r["model"] == "noisy-reference:0.5" and r["agent"] == "react")
    assert react["wins"] + react["losses"] + react["ties"] == len(TASKS)
    assert react["losses"] >= 1  # the reference solved the task ReAct gave up on
    assert react["tie_rate"] == pytest.approx(react["ties"] / len(TASKS))
    assert react["win_rate"] == pytest.approx((react["wins"] + react["ties"] / 2) / len(TASKS))
    lo, hi = react["win_rate_ci"]
    assert lo <= react["win_rate"] <= hi

    assert main(["leaderboard", "--runs-dir", str(view_runs.root), "--reference", ref, "--md"]) == 0
    md = capsys.readouterr().out
    assert "## suite default" in md and "| reference |" in md
    assert md.count("| noisy-reference:0.5 |") == 2


def test_runs_of_one_model_and_agent_pool_and_suites_rank_apart(
    view_runs: ViewRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    root = tmp_path / "runs"
    copy_run(view_runs, view_runs.react, root, "react-seed0")
    make_run(root, "react-seed1", "react", "noisy-reference:0.5", seed=1)
    mini = root / "mini"
    config_args = ["run", "--suite", str(MINI), "--agent", "react", "--model", "reference"]
    assert main([*config_args, "--out", str(mini), "--run-id", "ref", "--no-plots", "--json"]) == 0
    capsys.readouterr()
    rows = _rows(capsys, "--runs-dir", str(root))
    assert [(r["suite"], r["rank"]) for r in rows] == [("default", 1), ("mini", 1)]
    pooled = rows[0]
    assert len(pooled["runs"]) == 2 and pooled["episodes"] == 2 * len(TASKS)
    assert pooled["trials"] == 2 and set(pooled["pass_at_k"]) == {"1", "2"}
    labels = [
        lb["score"]
        for run in pooled["runs"]
        for lb in json.loads((Path(run) / "scores.json").read_text())["labels"]
    ]
    assert pooled["pass_rate"] == pytest.approx(sum(labels) / len(labels))
    assert pooled["pass_at_k"]["1"] == pytest.approx(pooled["pass_rate"])
    assert pooled["pass_hat_k"]["2"] <= pooled["pass_rate"] <= pooled["pass_at_k"]["2"]


def test_unscored_runs_are_left_out_with_a_note(
    view_runs: ViewRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    root = tmp_path / "runs"
    copy_run(view_runs, view_runs.react, root, "scored")
    unscored = copy_run(view_runs, view_runs.dfsdt, root, "unscored")
    (unscored / "scores.json").unlink()
    rows, err = _board(capsys, "--runs-dir", str(root))
    assert [r["keys"] for r in rows] == [["scored"]]
    assert "left out" in err and "unscored" in err and "sandbox eval" in err


def test_bad_input_is_a_one_line_error(
    view_runs: ViewRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    assert main(["leaderboard", "--runs-dir", str(tmp_path / "none")]) == 2
    (tmp_path / "empty").mkdir()
    assert main(["leaderboard", "--runs-dir", str(tmp_path / "empty")]) == 1
    run = str(view_runs.path(view_runs.react))
    assert main(["leaderboard", run, "--reference", str(tmp_path)]) == 2
    unscored = copy_run(view_runs, view_runs.react, tmp_path / "runs", "x")
    shutil.move(unscored / "scores.json", tmp_path / "scores.json")
    assert main(["leaderboard", run, "--reference", str(unscored)]) == 1
    errors = [line for line in capsys.readouterr().err.splitlines() if line.startswith("error:")]
    assert len(errors) == 4
    assert "no folder" in errors[0] and "no runs under" in errors[1]
    assert "not a run folder" in errors[2] and "has no readable scores.json" in errors[3]


def test_the_terminal_table_shows_tool_selection_from_the_step_metric_registry(
    view_runs: ViewRuns, capsys: pytest.CaptureFixture
) -> None:
    """Regression: the terminal table listed ``retrieve_f1`` by hand, a name no run has since
    it became ``selection_f1``, so tool selection never showed. Its columns now come from the
    registry: one headline measure per step metric of the default step protocol."""
    from sandbox.eval.steps.default_metrics import DEFAULT_METRICS
    from sandbox.view import Catalog, build_leaderboard

    board = build_leaderboard(Catalog(view_runs.root).records())
    headline = [m.main_measure for m in DEFAULT_METRICS]
    assert "selection_f1" in headline and "retrieve_f1" not in headline
    assert board.headline == [d for d in headline if d in board.dimensions]
    assert "selection_f1" in board.headline
    assert board.dimensions[:4] == [
        "instruct",
        "selection_precision",
        "selection_recall",
        "selection_f1",
    ]
    assert main(["leaderboard", str(view_runs.root)]) == 0
    table = capsys.readouterr().out
    head = next(line for line in table.splitlines() if "pass rate" in line)
    assert "select" in head
    react = next(r for r in board.rows if r.agent == "react" and r.model == "reference")
    row = next(line for line in table.splitlines() if "│ react " in line and "│ reference" in line)
    assert f"{react.step_scores['selection_f1']:.1%}" in row


def test_a_run_scored_with_other_step_protocols_shows_their_scores(
    view_runs: ViewRuns, tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """A run scored only with --step-protocol teval,ultratool has no default step scores: its
    row shows those protocols' measures (PROTOCOL:MEASURE, weighted like the default's), which
    the table and the JSON list (it showed no step column at all)."""
    run = copy_run(view_runs, view_runs.react, tmp_path, "react-teval")
    flags = ["--step-protocol", "teval,ultratool", "--no-plots"]
    assert main(["eval", str(run), *flags]) == 0
    scores = json.loads((run / "scores.json").read_text())
    assert scores.get("step_scores") is None
    capsys.readouterr()
    (row,) = _rows(capsys, str(run))
    teval = scores["step_protocols"]["teval"]["intervals"]
    ultratool = scores["step_protocols"]["ultratool"]["intervals"]
    assert row["step_scores"]["teval:instruct"] == pytest.approx(teval["instruct"]["value"])
    assert row["step_scores"]["ultratool:tool_usage"] == pytest.approx(
        ultratool["tool_usage"]["value"]
    )
    assert "instruct" not in row["step_scores"]  # the default protocol's: not scored
    from sandbox.view import Catalog, build_leaderboard

    board = build_leaderboard(Catalog(tmp_path).records())
    assert "teval:instruct" in board.headline and "ultratool:tool_usage" in board.headline
    assert board.dimensions.index("teval:instruct") < board.dimensions.index("ultratool:tool_usage")
    assert main(["leaderboard", str(run)]) == 0
    table = capsys.readouterr().out
    assert f"{row['step_scores']['teval:instruct']:.1%}" in table
