"""Forks: the first K recorded steps are replayed, then a live model continues."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.cli import main
from sandbox.errors import ConfigError
from sandbox.replay import fork_run
from sandbox.run import run_suite
from sandbox.store import RunStore, read_trajectories
from sandbox.store.config import RunConfig

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"


@pytest.fixture
def noisy_run(tmp_path: Path) -> Path:
    config = RunConfig(
        suite=str(MINI), agent="react", model="noisy-reference:0.6", seed=5, out=str(tmp_path)
    )
    return Path(run_suite(config, show_progress=False).path)


def _longest(run: Path):
    return max(read_trajectories(run), key=lambda t: (len(t.chosen_path), t.scenario_id))


def test_fork_replays_the_prefix_then_the_live_model_continues(
    noisy_run: Path, tmp_path: Path
) -> None:
    recorded = _longest(noisy_run)
    assert len(recorded.chosen_path) >= 2
    result = fork_run(
        noisy_run,
        task=recorded.scenario_id,
        until_step=1,
        then_model="reference",
        out=tmp_path / "forks",
    )
    (forked,) = read_trajectories(result.path)
    first = recorded.node(recorded.chosen_path[0])
    assert forked.nodes[0].content == first.content
    assert [c.arguments for c in forked.nodes[0].calls] == [c.arguments for c in first.calls]
    # from step 2 on the reference model decides, and it finishes the task
    assert forked.status.value == "answered"
    manifest = RunStore.open(result.path).manifest
    assert manifest.config.model.name == "fork"  # a model kind: the prefix, then the live model
    assert manifest.config.model.options["until_step"] == 1
    assert manifest.config.model.options["then"] == "reference"


def test_fork_of_zero_steps_is_the_live_model_alone(noisy_run: Path, tmp_path: Path) -> None:
    recorded = _longest(noisy_run)
    result = fork_run(
        noisy_run, task=recorded.scenario_id, until_step=0, then_model="reference", out=tmp_path
    )
    (forked,) = read_trajectories(result.path)
    assert forked.status.value == "answered"


def test_fork_errors_are_clear(noisy_run: Path, tmp_path: Path, capsys) -> None:
    recorded = _longest(noisy_run)
    with pytest.raises(ConfigError, match="no episode"):
        fork_run(noisy_run, task="nope", until_step=1, then_model="reference", out=tmp_path)
    too_far = len(recorded.chosen_path) + 1
    with pytest.raises(ConfigError, match="at most"):
        fork_run(
            noisy_run,
            task=recorded.scenario_id,
            until_step=too_far,
            then_model="reference",
            out=tmp_path,
        )
    assert main(["replay", str(noisy_run), "--task", recorded.scenario_id]) == 2
    assert "--until-step" in capsys.readouterr().err


def test_fork_from_the_cli(noisy_run: Path, tmp_path: Path, capsys) -> None:
    recorded = _longest(noisy_run)
    argv = ["replay", str(noisy_run), "--task", recorded.scenario_id, "--until-step", "1"]
    argv += ["--then-model", "reference", "--then-agent", "dfsdt", "--out", str(tmp_path)]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["episodes"] == 1 and summary["pass_rate"] == 1.0
