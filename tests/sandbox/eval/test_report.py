from __future__ import annotations

import io
import json
from pathlib import Path

from outcome_builders import add_call, make_run, make_suite, traj
from rich.console import Console

from agents.trajectory import Status
from sandbox.eval.evaluate import RunScores, evaluate_run
from sandbox.eval.report import (
    print_table,
    render_markdown,
    scores_json,
    stable,
    step_profile,
    write_report,
)

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def _scores(tmp_path: Path, *, with_reference: bool = False) -> tuple[Path, RunScores]:
    suite = make_suite(tmp_path / "suite")
    run = make_run(
        tmp_path / "runs",
        suite,
        "r1",
        [
            traj("add", answer="5", calls=[[add_call(2, 3)]]),
            traj("open", status=Status.error, answer=None, infra=True),
        ],
    )
    ref = make_run(tmp_path / "runs", suite, "r0", [traj("add", answer="9")])
    return run, evaluate_run(run, reference_run=ref if with_reference else None)


def test_stable_rounds_floats_everywhere() -> None:
    assert stable({"a": [0.1 + 0.2, -0.0, 1], "b": {"c": 2 / 3}}) == {
        "a": [0.3, 0.0, 1],
        "b": {"c": 0.666667},
    }
    assert json.dumps(stable(-1e-9)) == "0.0"


def test_markdown_reports_every_rate_with_interval_and_count(tmp_path: Path) -> None:
    _, scores = _scores(tmp_path, with_reference=True)
    md = render_markdown(scores)
    assert "| all | 2 | 1 | 0 | 1 | 50.0% [" in md  # the infra-failed episode is left out...
    assert "Left out of the pass rate (infra): 1: open" in md  # ...and listed
    assert "## Step-level scores" in md and "| plan_f1 |" in md
    assert "## Win rate against r0" in md and "exact p =" in md
    assert "| open | 0 | error | unsolved | rule | infra error: endpoint down |" in md
    assert "| impossible | 0 | missing | unsolved | rule |" in md


def test_write_report_writes_json_markdown_and_pngs(tmp_path: Path) -> None:
    run, scores = _scores(tmp_path)
    written = write_report(run, scores)
    names = sorted(p.name for p in written)
    assert names == [
        "cost_vs_pass.png",
        "pass_rate.png",
        "report.md",
        "scores.json",
        "step_profile.png",
    ]
    for p in written:
        if p.suffix == ".png":
            assert p.read_bytes()[:8] == PNG_MAGIC and p.stat().st_size > 2000
    assert (run / "scores.json").read_text() == scores_json(scores)
    assert step_profile(scores) and all(iv.n > 0 for _, iv in step_profile(scores))


def test_terminal_table(tmp_path: Path) -> None:
    _, scores = _scores(tmp_path, with_reference=True)
    buf = io.StringIO()
    print_table(scores, Console(file=buf, width=120))
    text = buf.getvalue()
    assert "pass rate [95% CI]" in text and "G1" in text and "G2" in text
    assert "Step-level scores" in text
    assert "vs r0: 1 wins / 0 losses" in text
