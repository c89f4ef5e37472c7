"""What an executor is handed and hands back: ``EpisodeBatch``, ``OnResult``, ``Executor``.

Apart from the registry (``sandbox.run.executor``) so that executors in their own modules (Ray)
import it without a cycle. May import ``sandbox.store``, ``sandbox.run.episode``, ``agents`` and
``mock_tools``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from agents.trajectory import Trajectory
from mock_tools import Suite, Task
from sandbox.run.episode import EpisodePlan
from sandbox.store import RunConfig

__all__ = ["EpisodeBatch", "Executor", "OnResult"]

OnResult = Callable[[Task, int, Trajectory], None]
"""``done(task, trial, trajectory)``: called once per finished episode, in the runner's loop."""


@dataclass
class EpisodeBatch:
    """What an executor runs: ``todo`` episodes of a run, with what every episode shares."""

    config: RunConfig
    suite: Suite
    plan: EpisodePlan
    todo: list[tuple[Task, int]]


class Executor(Protocol):
    async def run(self, batch: EpisodeBatch, done: OnResult) -> None:
        """Run every episode of ``batch``; call ``done`` for each as it finishes."""
        ...
