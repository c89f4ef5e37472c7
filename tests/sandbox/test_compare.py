"""``sandbox compare`` on the tiny suite: one run folder per strategy and one table."""

from __future__ import annotations

import json
from pathlib import Path

from harness_suite import suite_path

from sandbox.cli import main
from sandbox.compare.comparison import compare_runs, run_comparison
from sandbox.store.config import RunConfig


def test_compare_runs_every_strategy_on_the_same_tasks(tmp_path: Path) -> None:
    config = RunConfig(
        suite=str(suite_path(tmp_path)),
        model="noisy-reference:0.4",
        trials=2,
        seed=3,
        out=str(tmp_path / "runs"),
    )
    comparison = run_comparison(config, ["react", "dfsdt", "react@3"], show_progress=False)
    folder = Path(comparison.path)
    assert folder.name.startswith("compare-")
    assert sorted(p.name for p in folder.iterdir() if p.is_dir()) == ["dfsdt", "react", "react@3"]
    assert [s.agent for s in comparison.strategies] == ["react", "dfsdt", "react@3"]
    episodes = {
        s.agent: sorted((lb.task_id, lb.trial) for lb in s.labels) for s in comparison.strategies
    }
    assert episodes["react"] == episodes["dfsdt"] == episodes["react@3"]
    assert comparison.model == "noisy-reference:0.4" and comparison.seed == 3
    for s in comparison.strategies:
        manifest = json.loads(Path(s.run, "manifest.json").read_text())
        assert manifest["config"]["model"]["name"] == "noisy-reference:0.4"
        assert manifest["config"]["seed"] == 3
    saved = json.loads((folder / "comparison.json").read_text())
    assert saved["schema"] == "agent-sandbox/comparison@1"
    assert [s["agent"] for s in saved["strategies"]] == ["react", "dfsdt", "react@3"]
    again = compare_runs([s.run for s in comparison.strategies])
    assert [s.pass_rate for s in again.strategies] == [s.pass_rate for s in comparison.strategies]
    # pairwise statistics: every ordered pair in the win-rate matrix, every pair tested once
    assert set(comparison.win_rates) == {"react", "dfsdt", "react@3"}
    cell, mirror = comparison.win_rates["dfsdt"]["react"], comparison.win_rates["react"]["dfsdt"]
    assert (cell.wins, cell.losses, cell.ties) == (mirror.losses, mirror.wins, mirror.ties)
    assert cell.wins + cell.losses + cell.ties == len(episodes["react"])
    assert abs(cell.win_rate.value + mirror.win_rate.value - 1.0) < 1e-9
    assert [(p.a, p.b) for p in comparison.paired] == [
        ("react", "dfsdt"),
        ("react", "react@3"),
        ("dfsdt", "react@3"),
    ]
    for p in comparison.paired:
        assert p.only_a + p.only_b + p.both + p.neither == p.n == len(episodes["react"])
        assert 0.0 <= p.p_value <= 1.0


def test_compare_command_prints_one_table(tmp_path: Path, capsys) -> None:
    code = main(
        [
            "compare",
            "--agents",
            "react,dfsdt",
            "--suite",
            str(suite_path(tmp_path)),
            "--model",
            "reference",
            "--out",
            str(tmp_path / "runs"),
        ]
    )
    out, _ = capsys.readouterr()
    assert code == 0
    for word in ("react", "dfsdt", "pass rate", "model calls", "tool calls", "tokens", "steps"):
        assert word in out
    assert "win rate, row against column" in out and "McNemar" in out
    assert "comparison folder:" in out
    (folder,) = (tmp_path / "runs").iterdir()
    report = (folder / "report.md").read_text()
    assert "## Win rate" in report and "## Paired test" in report
    assert (folder / "pass_rate.png").stat().st_size > 0


def test_compare_rejects_unknown_agents_before_running(tmp_path: Path, capsys) -> None:
    code = main(
        [
            "compare",
            "--agents",
            "react,magic",
            "--suite",
            str(suite_path(tmp_path)),
            "--out",
            str(tmp_path / "runs"),
        ]
    )
    assert code == 2
    assert "unknown agent 'magic'" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()


def test_compare_runs_of_existing_folders(tmp_path: Path, capsys) -> None:
    """--runs compares run folders that exist (no new episode); with two, --json holds the
    second's win and tie rate over the first, and each run's pass rate."""
    config = RunConfig(
        suite=str(suite_path(tmp_path)), model="noisy-reference:0.4", out=str(tmp_path / "runs")
    )
    made = run_comparison(config, ["react", "dfsdt"], show_progress=False)
    react, dfsdt = (s.run for s in made.strategies)
    args = ["compare", "--runs", react, dfsdt, "--out", str(tmp_path / "cmp"), "--json"]
    assert main([*args, "--no-plots"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert (line["reference"], line["candidate"]) == ("react", "dfsdt")
    cell = made.win_rates["dfsdt"]["react"]
    assert line["win_rate"] == round(cell.win_rate.value, 6)
    assert line["tie_rate"] == round(cell.ties / (cell.wins + cell.losses + cell.ties), 6)
    assert line["pass_rate"] == {s.agent: round(s.pass_rate, 6) for s in made.strategies}
    assert line["protocol"] == "default" and line["warnings"] == []
    # the same runs in the same order: the same folder (its judge cache is reused)
    assert main([*args, "--no-plots"]) == 0
    again = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert again["comparison"] == line["comparison"]
    assert len(list((tmp_path / "cmp").iterdir())) == 1


def test_compare_runs_rejects_bad_input(tmp_path: Path, capsys) -> None:
    assert main(["compare", "--runs", str(tmp_path)]) == 2
    assert "at least two" in capsys.readouterr().err
    assert main(["compare", "--runs", str(tmp_path / "x"), str(tmp_path / "y")]) == 1
    assert "no run folder" in capsys.readouterr().err
    code = main(["compare", "--runs", "a", "b", "--protocol", "toolbench"])
    assert code == 2 and "needs a judge" in capsys.readouterr().err
