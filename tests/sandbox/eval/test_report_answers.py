"""report.md shows each episode's final answer next to its label's reason, and the command that
opens the run in the viewer."""

from __future__ import annotations

from pathlib import Path

from outcome_builders import add_call, make_run, make_suite, traj

from agents.trajectory import Status
from sandbox.eval.evaluate import evaluate_run
from sandbox.eval.report import REPORT_FILE, render_markdown, write_report


def test_each_episode_row_has_its_answer_and_reason(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite")
    answer = "It is 5 | five,\nas asked"
    run = make_run(
        tmp_path / "runs",
        suite,
        "r1",
        [
            traj("add", answer=answer, calls=[[add_call(2, 3)]]),
            traj("open", status=Status.gave_up, answer=None),
        ],
    )
    write_report(run, evaluate_run(run), plots=False)
    md = (run / REPORT_FILE).read_text()
    assert f"Browse its episodes, trees and scores: `sandbox view {run}`" in md
    assert "| task | trial | status | label | method | reason | final answer |" in md
    row = next(line for line in md.splitlines() if line.startswith("| add |"))
    assert row.endswith("| It is 5 \\| five, as asked |")  # one line, the pipe escaped
    gave_up = next(line for line in md.splitlines() if line.startswith("| open |"))
    assert gave_up.endswith("|  |")  # no answer: an empty cell
    missing = next(line for line in md.splitlines() if line.startswith("| impossible |"))
    assert "no trajectory" in missing


def test_long_answers_are_cut_and_without_answers_the_column_is_empty(tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite")
    run = make_run(tmp_path / "runs", suite, "r1", [traj("add", answer="x" * 1000)])
    scores = evaluate_run(run)
    md = render_markdown(scores, answers={("add", 0): "x" * 1000})
    row = next(line for line in md.splitlines() if line.startswith("| add |"))
    assert row.endswith("x" * 239 + "… |")
    assert "sandbox view" not in render_markdown(scores)
