"""What a fork run is set up with (``sandbox.replay.fork.fork_run``): the recorded run's agent
and its options unless another agent is named (then the options that agent takes), one episode
of one task, a new run beside the recorded one by default, the ``fork`` model with exactly the
fork's options; and the one-line errors for a bad agent, a bad step count or a missing trial."""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.errors import ConfigError
from sandbox.replay import fork_run
from sandbox.run import run_suite
from sandbox.store import RunStore, read_trajectories
from sandbox.store.config import RunConfig

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"
OPTIONS = {"width": 3, "max_observation_chars": 500}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    config = RunConfig(suite=str(MINI), agent="dfsdt", model="reference", seed=2, out=str(out))
    config = config.with_values({"agent.options": OPTIONS})
    return Path(run_suite(config, show_progress=False).path)


def _task(run: Path) -> str:
    return max(
        read_trajectories(run), key=lambda t: (len(t.chosen_path), t.scenario_id)
    ).scenario_id


def test_a_fork_keeps_the_recorded_agent_and_runs_one_episode_beside_the_run(
    recorded: Path,
) -> None:
    task = _task(recorded)
    result = fork_run(recorded, task=task, until_step=1, then_model="reference")
    fork = RunStore.open(result.path).manifest
    base = RunStore.open(recorded).manifest
    assert Path(result.path).parent == recorded.parent  # the recorded run's output folder
    assert fork.run_id != base.run_id
    config = fork.config
    assert (config.agent.name, config.agent.options) == ("dfsdt", OPTIONS)
    assert (config.tasks, config.trials, config.seed) == ([task], 1, 2)
    assert config.model.name == "fork"
    assert config.model.options == {
        "run": str(RunStore.open(recorded).path),
        "task": task,
        "trial": 0,
        "until_step": 1,
        "then": "reference",
    }
    assert Path(config.suite) == Path(RunStore.open(recorded).suite_path())
    assert [(t.scenario_id, t.trial) for t in read_trajectories(result.path)] == [(task, 0)]


def test_another_agent_takes_only_the_options_it_has(recorded: Path, tmp_path: Path) -> None:
    task = _task(recorded)
    result = fork_run(
        recorded, task=task, until_step=0, then_model="reference", then_agent="react", out=tmp_path
    )
    config = RunStore.open(result.path).manifest.config
    assert Path(result.path).parent == tmp_path
    assert (config.agent.name, config.agent.options) == ("react", {"max_observation_chars": 500})


def test_fork_errors_are_one_clear_line(recorded: Path, tmp_path: Path) -> None:
    task = _task(recorded)
    with pytest.raises(ConfigError) as e:
        fork_run(recorded, task=task, until_step=1, then_model="reference", then_agent="nope")
    assert "nope" in str(e.value) and "\n" not in str(e.value)
    with pytest.raises(ConfigError) as e:
        fork_run(recorded, task=task, until_step=-1, then_model="reference", out=tmp_path)
    assert str(e.value) == "invalid fork: until_step: Input should be greater than or equal to 0"
    with pytest.raises(ConfigError) as e:
        fork_run(recorded, task=task, until_step=1, then_model="reference", trial=1, out=tmp_path)
    assert str(e.value) == f"run {RunStore.open(recorded).path} has no episode {task!r} trial 1"
    assert not any(tmp_path.iterdir())  # nothing was written for a fork that cannot run


def test_the_continuing_model_is_resolved_with_the_environment_given(
    recorded: Path, tmp_path: Path
) -> None:
    """An alias from the ``SANDBOX_MODELS_FILE`` of the fork's environment can continue it."""
    models = tmp_path / "models.yaml"
    models.write_text("models:\n  my-reference:\n    kind: reference\n")
    task = _task(recorded)
    with pytest.raises(ConfigError, match="my-reference"):
        fork_run(recorded, task=task, until_step=1, then_model="my-reference", out=tmp_path)
    result = fork_run(
        recorded,
        task=task,
        until_step=1,
        then_model="my-reference",
        out=tmp_path / "forks",
        env={"SANDBOX_MODELS_FILE": str(models)},
    )
    (forked,) = read_trajectories(result.path)
    assert forked.status.value == "answered"


def test_a_fork_prints_no_progress_of_its_own(
    recorded: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``fork_run`` is quiet: the command that calls it reports the new run."""
    fork_run(recorded, task=_task(recorded), until_step=1, then_model="reference", out=tmp_path)
    assert capsys.readouterr().err == ""
