"""The comparison's report.md: a header on one line, the command that opens the runs, and the
list of episodes whose label is not the same for every strategy."""

from __future__ import annotations

from pathlib import Path

from harness_suite import suite_path

from sandbox.compare.comparison import run_comparison
from sandbox.compare.report import render_comparison_markdown
from sandbox.store.config import RunConfig


def test_the_report_lists_the_tasks_that_differ(tmp_path: Path) -> None:
    config = RunConfig(
        suite=str(suite_path(tmp_path)), model="noisy-reference:0.6", seed=3, out=str(tmp_path)
    )
    comparison = run_comparison(config, ["react", "dfsdt"], show_progress=False)
    md = render_comparison_markdown(comparison)
    lines = md.splitlines()
    assert lines[2].startswith("Suite `") and ", model `noisy-reference:0.6`, seed 3," in lines[2]
    assert lines[2].endswith(", protocol `default`.")
    assert not any(line.startswith(",") for line in lines)  # the old header broke here
    assert f"`sandbox view {comparison.path}`" in md

    labels = {
        s.agent: {(lb.task_id, lb.trial): lb.label for lb in s.labels}
        for s in comparison.strategies
    }
    differ = [k for k in labels["react"] if labels["react"][k] != labels["dfsdt"].get(k)]
    assert "## Tasks where the strategies differ" in md
    rows = [line for line in lines if line.startswith("| ") and "| 0 |" in line]
    listed = {line.split(" | ")[0][2:] for line in rows if line.count("|") == 5}
    assert listed == {k[0] for k in differ}
    for task, trial in differ:
        react, dfsdt = labels["react"][(task, trial)], labels["dfsdt"][(task, trial)]
        assert f"| {task} | {trial} | {react} | {dfsdt} |" in md
    assert len(differ) == 2  # seed 3: DFSDT and ReAct part ways on two tasks of the mini suite
    assert f"{len(differ)} of {len(labels['react'])} episodes differ." in md
