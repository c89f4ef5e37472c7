"""``run --resume`` with other flags: a value that differs from the run's is refused, naming
the flag and both values; an equal one passes; what a resume takes still works (hardening round
two, item 5)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sandbox.cli import main
from sandbox.store import RunStore
from tests.hostile.test_run_records import make_run, one_error_line


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("recorded"))


@pytest.mark.parametrize(
    ("given", "shown"),
    [
        (["--agent", "dfsdt"], "--agent dfsdt differs from run run's react"),
        (["--tasks", "mini_u_refund"], '--tasks ["mini_u_refund"] differs from run run\'s []'),
        (["--trials", "3"], "--trials 3 differs from run run's 1"),
        (["--seed", "7"], "--seed 7 differs from run run's 0"),
        (["--max-model-calls", "3"], "--max-model-calls 3 differs from run run's 200"),
        (["-C", "budget.max_depth=2"], "--max-depth 2 differs from run run's"),
    ],
)
def test_26_a_resume_refuses_a_flag_that_changes_the_run(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], given, shown
) -> None:
    """On main each was ignored with a note and exit 0."""
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    before = (run / "manifest.json").read_bytes()
    assert main(["run", "--resume", str(run), *given]) == 2
    assert shown in one_error_line(capsys.readouterr().err)
    assert (run / "manifest.json").read_bytes() == before  # nothing ran


def test_26_equal_values_and_the_settings_a_resume_takes_pass(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    config = RunStore.open(run).manifest.config
    same = ["--agent", "react", "--trials", "1", "--seed", "0", "--max-model-calls", "200"]
    same += ["--suite", config.suite, "--model", "reference"]
    taken = ["--max-run-cost", "5", "--concurrency", "2", "--no-plots", "--json"]
    assert main(["run", "--resume", str(run), *same, *taken]) == 0
    out, _ = capsys.readouterr()
    assert json.loads(out.splitlines()[-1])["episodes"] == 4  # --json was taken
    config = RunStore.open(run).manifest.config
    assert (config.budget.max_run_cost, config.executor.concurrency) == (5, 2)
    assert not (run / "pass_rate.png").exists()  # --no-plots was taken


def test_26_a_config_file_of_the_run_itself_passes_and_one_changing_it_does_not(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    shutil.copytree(recorded, run)
    assert main(["run", "--resume", str(run), "--print-config"]) == 0
    own = tmp_path / "own.yaml"
    own.write_text(capsys.readouterr().out)
    assert main(["run", "--resume", str(run), "--config", str(own), "--no-plots"]) == 0
    capsys.readouterr()
    other = tmp_path / "other.yaml"
    other.write_text(own.read_text().replace("seed: 0", "seed: 5"))
    assert main(["run", "--resume", str(run), "--config", str(other)]) == 2
    assert "--seed 5 differs from run run's 0" in one_error_line(capsys.readouterr().err)
