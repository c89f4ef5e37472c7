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
``async run(batch, done)`` (``sandbox.run.batch``) and one ``register_executor`` call. May import
``sandbox.store``, ``sandbox.tool_envs``, ``sandbox.run`` modules, ``agents`` and ``mock_tools``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from agents.errors import AgentsError
from agents.registry import Registry
from sandbox.errors import ConfigError
from sandbox.run.batch import EpisodeBatch, Executor, OnResult

if TYPE_CHECKING:  # the registry is read by ``sandbox run --help``: it stays cheap to import
    from mock_tools import Task
    from sandbox.store import RunConfig
    from sandbox.tool_envs import ToolEnvs

__all__ = [
    "EXECUTORS",
    "EpisodeBatch",
    "Executor",
    "ExecutorKind",
    "LocalExecutor",
    "OnResult",
    "build_executor",
    "register_executor",
]


@dataclass(frozen=True)
class ExecutorKind:
    name: str
    build: Callable[[RunConfig], Executor]
    """Checks what the executor needs (an extra, an address) and makes it; ``ConfigError``."""
    description: str = ""


EXECUTORS: Registry[ExecutorKind] = Registry("executor")


def register_executor(kind: ExecutorKind) -> ExecutorKind:
    return EXECUTORS.register(kind.name, kind)


def build_executor(config: RunConfig) -> Executor:
    """The executor ``config.executor`` names; ``ConfigError`` listing the known ones."""
    try:
        kind = EXECUTORS.get(config.executor)
    except AgentsError as e:
        raise ConfigError(str(e)) from e
    return kind.build(config)


class LocalExecutor:
    """Episodes as asyncio tasks in this process, at most ``config.concurrency`` at a time."""

    def __init__(self) -> None:
        self._tools: ToolEnvs | None = None
        self._last_report: dict[str, Any] = {}

    def tools_report(self) -> dict[str, Any]:
        """The open tools' report; once they are closed, the one taken as they closed."""
        return self._last_report if self._tools is None else self._tools.report()

    async def run(self, batch: EpisodeBatch, done: OnResult) -> None:
        from sandbox.run.episode import run_episode
        from sandbox.tool_envs import open_tool_envs

        limit = asyncio.Semaphore(batch.config.concurrency)
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


def _local(config: RunConfig) -> Executor:
    return LocalExecutor()


def _ray(config: RunConfig) -> Executor:
    from sandbox.run.ray_executor import RayExecutor  # Ray only for runs that use it

    return RayExecutor(config.ray_address)


register_executor(ExecutorKind("local", _local, "asyncio in this process"))
register_executor(ExecutorKind("ray", _ray, "Ray actors on a cluster (the ray extra)"))
