"""Executors: where a run's episodes run. The runner hands them a batch; they hand back results.

An executor takes an ``EpisodeBatch`` (the config, the suite, the episode plan, the episodes to
run) and calls ``done(task, trial, trajectory)`` in the runner's process as each episode
finishes, in any order, exactly once per episode. The runner's ``done`` appends the trajectory to
the run folder (fsynced) and updates the progress, so the run folder has one writer whatever the
executor, and resume and crash safety hold. ``--concurrency`` caps the episodes in flight.

================  ===========================================================================
executor          what it is
================  ===========================================================================
``local``         asyncio in this process: the run's tools opened once (``open_tool_envs``),
                  episodes under a semaphore (``LocalExecutor``)
``ray``           Ray actors on a cluster, each serving the suite in process
                  (``sandbox.run.ray_executor``; the optional ``ray`` extra)
================  ===========================================================================

Both run ``sandbox.run.episode.run_episode``. A new executor is a class with
``async run(batch, done)`` (``sandbox.run.batch``) and one ``register_executor`` call, or an
``ExecutorKind`` that an installed package declares in the ``agent_sandbox.executors``
entry-point group, or one named by path (``--executor my_pkg.executors:KIND``). An executor
declares its options class (``ExecutorKind.options``; ``--executor-option KEY=VALUE``), and its
builder gets them validated. May import ``sandbox.store``, ``sandbox.tool_envs``, ``sandbox.run``
modules, ``agents`` and ``mock_tools``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from agents.errors import AgentsError
from agents.plugin_calls import broke, is_foreign, plugin_code
from agents.registry import NoOptions, Registry, instances_of, validate_options
from sandbox.errors import ConfigError, PluginFailure, SandboxError
from sandbox.run.batch import EpisodeBatch, Executor, OnResult

if TYPE_CHECKING:  # the registry is read by ``sandbox run --help``: it stays cheap to import
    from mock_tools import Task
    from sandbox.store import RunConfig
    from sandbox.tool_envs import ToolEnvs

__all__ = [
    "EXECUTORS",
    "EpisodeBatch",
    "EpisodeReports",
    "Executor",
    "ExecutorKind",
    "LocalExecutor",
    "OnResult",
    "RayOptions",
    "build_executor",
    "register_executor",
]


@dataclass(frozen=True)
class ExecutorKind:
    name: str
    build: Callable[[RunConfig, Any], Executor]
    """``(config, options)``: checks what the executor needs (an extra, an address) and makes it
    (``ConfigError``); ``options`` is an instance of ``options``, validated."""
    description: str = ""
    options: type[BaseModel] = NoOptions
    """Its options class (``--executor-option KEY=VALUE``)."""


EXECUTORS: Registry[ExecutorKind] = Registry(
    "executor",
    group="agent_sandbox.executors",
    adapt=instances_of(ExecutorKind),
    expected="an ExecutorKind (sandbox.run.executor)",
)


def register_executor(kind: ExecutorKind) -> ExecutorKind:
    return EXECUTORS.register(kind.name, kind)


def build_executor(config: RunConfig) -> Executor:
    """The executor ``config.executor.name`` names, with ``config.executor.options``;
    ``ConfigError`` listing the known executors or naming the options it takes."""
    try:
        kind = EXECUTORS.get(config.executor.name)
        what = f"executor {kind.name!r}"
        options = validate_options(what, kind.options, config.executor.options)
    except (AgentsError, ValueError) as e:
        raise ConfigError(str(e)) from e
    if not is_foreign(kind.build):
        return kind.build(config, options)
    with plugin_code(what, PluginFailure, passing=(SandboxError,)):
        executor = kind.build(config, options)
    if not callable(getattr(executor, "run", None)):
        raise broke(
            what,
            f"its builder returned a {type(executor).__name__}, not an executor "
            "(an object with async run(batch, done))",
            PluginFailure,
        )
    return executor


class EpisodeReports:
    """What an executor reports, checked against what it was given: each episode of the batch
    once (``done``), and at the end every one of them but those the run's cost budget kept from
    starting (``finish``); else a ``PluginFailure`` naming the executor (``what``)."""

    def __init__(self, todo: list[tuple[Task, int]], what: str) -> None:
        self.what = what
        self.expected = {(task.id, trial) for task, trial in todo}
        self.seen: set[tuple[str, int]] = set()

    def done(self, task: Task, trial: int) -> None:
        key = (getattr(task, "id", task), trial)
        if key not in self.expected or key in self.seen:
            problem = "twice" if key in self.seen else "though it was not given it"
            raise broke(
                self.what,
                f"it reported episode {key[0]!r} trial {key[1]} {problem}; "
                "an executor reports each episode of its batch once",
                PluginFailure,
            )
        self.seen.add(key)

    def finish(self, skipped: int) -> None:
        missing = sorted(self.expected - self.seen)
        if len(missing) > skipped:
            task, trial = missing[0]
            raise broke(
                self.what,
                f"it returned with {len(missing)} episode(s) never reported (episode {task!r} "
                f"trial {trial} among them); an executor reports every episode it runs",
                PluginFailure,
            )


class LocalExecutor:
    """Episodes as asyncio tasks in this process, at most ``executor.concurrency`` at a time (and
    at most the model's ``launch.slots``: ``EpisodePlan.episodes_at_once``)."""

    def __init__(self) -> None:
        self._tools: ToolEnvs | None = None
        self._last_report: dict[str, Any] = {}

    def tools_report(self) -> dict[str, Any]:
        """The open tools' report; once they are closed, the one taken as they closed."""
        return self._last_report if self._tools is None else self._tools.report()

    async def run(self, batch: EpisodeBatch, done: OnResult) -> None:
        from sandbox.run.episode import run_episode
        from sandbox.tool_envs import open_tool_envs

        limit = asyncio.Semaphore(batch.plan.episodes_at_once(batch.config.executor.concurrency))
        async with open_tool_envs(batch.config, batch.suite, batch.env) as tools:
            self._tools = tools

            async def one(task: Task, trial: int) -> None:
                async with limit:
                    if not batch.spend.may_start():
                        return
                    traj = await run_episode(batch.plan, tools, task, trial)
                done(task, trial, traj)

            jobs = [asyncio.ensure_future(one(task, trial)) for task, trial in batch.todo]
            try:
                await asyncio.gather(*jobs)
            finally:
                for job in jobs:
                    job.cancel()
                self._last_report, self._tools = tools.report(), None


class RayOptions(BaseModel):
    """The options of the ``ray`` executor."""

    model_config = NoOptions.model_config

    max_restarts: int = Field(
        default=3,
        ge=0,
        description="How often a lost worker is restarted (its pending episodes retried) "
        "before its episodes move to the workers left.",
    )
    object_store_mb: int = Field(
        default=200, ge=80, description="Object store of a private local Ray, in MB."
    )


def _local(config: RunConfig, options: NoOptions) -> Executor:
    return LocalExecutor()


def _ray(config: RunConfig, options: RayOptions) -> Executor:
    from sandbox.run.ray_executor import RayExecutor  # Ray only for runs that use it

    return RayExecutor(
        config.executor.ray_address,
        max_restarts=options.max_restarts,
        object_store_mb=options.object_store_mb,
    )


register_executor(ExecutorKind("local", _local, "asyncio in this process"))
register_executor(
    ExecutorKind("ray", _ray, "Ray actors on a cluster (the ray extra)", options=RayOptions)
)
