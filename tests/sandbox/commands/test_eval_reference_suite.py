"""``sandbox eval --reference`` against a run of another suite version warns, ``--json`` too
(issue 40 item 8): the win rate compares episodes whose tools did not behave the same, and
``compare`` warns and the leaderboard refuses; ``eval --json`` printed the win rate alone."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sandbox.cli import main

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
WARNING = "tool behaviour was not identical for the two runs"


@pytest.fixture(scope="module")
def two_versions(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Runs of the mini suite and of a copy whose one recording answers otherwise."""
    tmp = tmp_path_factory.mktemp("versions")
    other = tmp / "mini-v2"
    shutil.copytree(MINI, other)
    shipping = other / "recordings" / "shipping.jsonl"
    shipping.write_text(shipping.read_text().replace('"days": 2}', '"days": 3}'))
    runs = tmp / "runs"
    for suite, run_id in ((MINI, "v1"), (other, "v2")):
        argv = ["run", "--suite", str(suite), "--model", "reference", "--no-plots"]
        assert main([*argv, "--out", str(runs), "--run-id", run_id, "--json"]) == 0
    return runs / "v2", runs / "v1"


def test_eval_json_carries_the_other_suite_warning_and_says_it_on_stderr(
    two_versions: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, reference = two_versions
    capsys.readouterr()
    argv = ["eval", str(run), "--reference", str(reference), "--no-plots", "--json"]
    assert main(argv) == 0
    out, err = capsys.readouterr()
    (line,) = out.splitlines()
    summary = json.loads(line)
    assert summary["win_rate"] is not None
    assert len(summary["warnings"]) == 1 and WARNING in summary["warnings"][0]
    assert WARNING in err


def test_eval_json_of_one_suite_version_has_no_warning(
    two_versions: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    run, _ = two_versions
    capsys.readouterr()
    assert main(["eval", str(run), "--reference", str(run), "--no-plots", "--json"]) == 0
    out, err = capsys.readouterr()
    assert "warnings" not in json.loads(out) and "warning" not in err
