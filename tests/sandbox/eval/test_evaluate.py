from __future__ import annotations

import json
from pathlib import Path

import pytest
from outcome_builders import add_call, make_run, make_suite, traj
from tooleval_judge_server import ToolEvalJudgeServer

from agents.trajectory import Status
from sandbox.cli import main
from sandbox.errors import RunError
from sandbox.eval.evaluate import evaluate_run
from sandbox.eval.report import SCORES_FILE, write_report


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    return make_suite(tmp_path / "suite")


def candidate(out: Path, suite: Path, answer_open: str = "lovely") -> Path:
    return make_run(
        out,
        suite,
        "cand",
        [
            traj("add", answer="The sum is 5.", calls=[[add_call(2, 3)]], run_id="cand"),
            traj("open", answer=answer_open, calls=[[add_call(2, 3)]], run_id="cand"),
            traj("impossible", status=Status.gave_up, give_up_text="No division API.", answer=None),
        ],
    )


def reference(out: Path, suite: Path) -> Path:
    return make_run(
        out,
        suite,
        "ref",
        [
            traj("add", answer="6", calls=[[add_call(2, 4)]], run_id="ref"),
            traj("open", answer="fine", calls=[[add_call(2, 3)]], run_id="ref"),
        ],
    )


def test_evaluate_run_pass_rate_steps_and_win_rate(tmp_path: Path, suite: Path) -> None:
    cand = candidate(tmp_path / "runs", suite)
    ref = reference(tmp_path / "runs", suite)
    scores = evaluate_run(cand, reference_run=ref)
    p = scores.pass_rate
    assert (p.n, p.solved, p.unsure, p.unsolved) == (3, 2, 1, 0)
    assert p.pass_rate.value == pytest.approx(2.5 / 3)
    assert p.groups["G2"].pass_rate.value == pytest.approx(0.75)
    assert [(lb.task_id, lb.method) for lb in scores.labels] == [
        ("add", "check"),
        ("open", "none"),
        ("impossible", "rule"),
    ]
    assert scores.step_scores is not None
    assert scores.step_scores.summary["dimensions"]["instruct"]["mean"] == 1.0
    assert scores.step_scores.intervals["plan_f1"].n == 2
    assert scores.pass_at_k == {}

    ref_scores = scores.reference
    assert ref_scores is not None
    w = ref_scores.win
    # add: only the candidate solved; open: neither solved and all else equal -> tie;
    # impossible: candidate solved, the reference has no episode.
    assert [(o.task_id, o.winner, o.rule) for o in w.outcomes] == [
        ("add", "candidate", "solved"),
        ("open", "tie", "both_failed_equal"),
        ("impossible", "candidate", "solved"),
    ]
    assert (w.wins, w.losses, w.ties) == (2, 0, 1)
    assert w.win_rate.value == pytest.approx(2.5 / 3)
    assert w.tooleval_win_rate.value == pytest.approx(2 / 3)
    assert (ref_scores.paired.only_a, ref_scores.paired.only_b) == (2, 0)
    assert ref_scores.paired.p_value == pytest.approx(0.5)


def test_scores_json_is_byte_identical_across_evaluations(tmp_path: Path, suite: Path) -> None:
    cand = candidate(tmp_path / "runs", suite)
    ref = reference(tmp_path / "runs", suite)
    write_report(cand, evaluate_run(cand, reference_run=ref), plots=False)
    first = (cand / SCORES_FILE).read_bytes()
    write_report(cand, evaluate_run(cand, reference_run=ref), plots=False)
    assert (cand / SCORES_FILE).read_bytes() == first
    data = json.loads(first)
    assert list(data) == sorted(data)
    assert data["schema"] == "agent-sandbox/scores@1"


def test_missing_episodes_and_trials(tmp_path: Path, suite: Path) -> None:
    run = make_run(
        tmp_path / "runs",
        suite,
        "trials",
        [
            traj("add", answer="5", trial=0),
            traj("add", answer="7", trial=1),
            traj("open", answer="x", trial=0),
        ],
        trials=2,
    )
    scores = evaluate_run(run)
    assert scores.episodes == 6 and scores.pass_rate.missing == 3
    keys = [(lb.task_id, lb.trial, lb.status) for lb in scores.labels]
    assert ("open", 1, "missing") in keys and ("impossible", 1, "missing") in keys
    # add: 1 of 2 solved; open: 0; impossible: 0.
    assert scores.pass_at_k == {"1": pytest.approx(1 / 6), "2": pytest.approx(1 / 3)}
    assert scores.pass_hat_k == {"1": pytest.approx(1 / 6), "2": 0.0}


def test_missing_or_corrupt_run_is_a_run_error(tmp_path: Path, suite: Path) -> None:
    with pytest.raises(RunError, match="no run folder"):
        evaluate_run(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunError, match="not a run folder"):
        evaluate_run(tmp_path / "empty")
    run = candidate(tmp_path / "runs", suite)
    (run / "trajectories.jsonl").write_text('{"not": "a trajectory"}\n{}\n')
    with pytest.raises(RunError, match="not a valid trajectory"):
        evaluate_run(run)


def test_cli_eval_json_and_errors(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cand = candidate(tmp_path / "runs", suite)
    ref = reference(tmp_path / "runs", suite)
    assert main(["eval", str(cand), "--reference", str(ref), "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == 3
    assert summary["pass_rate"] == pytest.approx(0.833333)
    assert summary["win_rate"] == pytest.approx(0.833333)
    for name in ("scores.json", "report.md", "pass_rate.png", "cost_vs_pass.png"):
        assert (cand / name).is_file(), name

    assert main(["eval", str(cand)]) == 0
    out = capsys.readouterr().out
    assert "pass rate" in out and "G2" in out

    assert main(["eval", str(tmp_path / "missing")]) == 1
    assert "no run folder" in capsys.readouterr().err
    assert main(["eval", str(cand), "--judge", "reference"]) == 2
    assert "OpenAI-compatible" in capsys.readouterr().err


def test_cli_eval_with_judge_over_http_and_cache(
    tmp_path: Path, suite: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cand = candidate(tmp_path / "runs", suite, answer_open="ANS-SOLVED")
    with ToolEvalJudgeServer() as server:
        judge = f"openai:judge@{server.base_url}"
        assert main(["eval", str(cand), "--judge", judge, "--json", "--no-plots"]) == 0
        first = json.loads(capsys.readouterr().out)
        calls = len(server.requests)
        assert main(["eval", str(cand), "--judge", judge, "--json", "--no-plots"]) == 0
        second = json.loads(capsys.readouterr().out)
        assert len(server.requests) == calls  # every answer came from the cache
    assert first["judge_calls"] == 3 and second["judge_calls"] == 0
    assert first["pass_rate"] == second["pass_rate"] == 1.0
    scores = json.loads((cand / SCORES_FILE).read_text())
    assert scores["judge"]["cache_hits"] == 3
    open_label = next(lb for lb in scores["labels"] if lb["task_id"] == "open")
    assert (open_label["label"], open_label["method"]) == ("solved", "judge")
