"""``fork_run``: replay the first K steps of a recorded episode, then continue live, as a new run.

``sandbox replay RUN --task T --until-step K --then-model M [--then-agent A]`` answers "what
would another model (or agent) have done from here?". The new run is an ordinary run whose model
is the ``fork`` kind (``sandbox.models.fork``) with options ``{run, task, trial, until_step,
then}``, so it is as reproducible and resumable as any run. May import ``sandbox.run``,
``sandbox.models``, ``sandbox.store`` and ``agents`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from agents.errors import AgentsError
from agents.strategies import options_for
from sandbox.errors import ConfigError
from sandbox.models.fork import ForkOptions, forked_episode
from sandbox.run import RunResult, run_suite
from sandbox.store import RunStore
from sandbox.store.error_text import first_error

__all__ = ["fork_run"]


def fork_run(
    run: str | Path,
    *,
    task: str,
    until_step: int,
    then_model: str,
    trial: int = 0,
    then_agent: str | None = None,
    out: str | Path | None = None,
    env: Mapping[str, str] | None = None,
) -> RunResult:
    """Fork episode ``(task, trial)`` of ``run`` after ``until_step`` steps into a new run."""
    store = RunStore.open(run)
    base = store.manifest.config
    agent = then_agent or base.agent.name
    try:
        agent_options = options_for(agent, base.agent.options)
    except AgentsError as e:
        raise ConfigError(str(e)) from e
    try:
        fork = ForkOptions(
            run=str(store.path), task=task, trial=trial, until_step=until_step, then=then_model
        )
    except ValidationError as e:
        raise ConfigError(f"invalid fork: {first_error(e)}") from e
    forked_episode(fork)  # a missing episode or too many steps fail before anything runs
    config = base.with_values(
        {
            "model.name": "fork",
            "model.options": fork.model_dump(),
            "agent.name": agent,
            "agent.options": agent_options,
            "tasks": [task],
            "trials": 1,
            "output.run_id": None,
            "output.out": str(out or Path(base.output.out)),
            "suite": str(store.suite_path()),
        }
    )
    return run_suite(config, env=env, show_progress=False)
