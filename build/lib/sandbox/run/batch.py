"""What an executor is handed and hands back: ``EpisodeBatch``, ``OnResult``, ``Executor``, and
the run's cost budget (``RunSpend``) every executor consults before it starts an episode.

Apart from the registry (``sandbox.run.executor``) so that executors in their own modules (Ray)
import it without a cycle. May import ``sandbox.store``, ``sandbox.run.episode``, ``agents`` and
``mock_tools``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: the executor registry imports this module
    from agents.trajectory import Trajectory
    from mock_tools import Suite, Task
    from sandbox.run.episode import EpisodePlan
    from sandbox.store import RunConfig

__all__ = ["EpisodeBatch", "Executor", "OnResult", "RunSpend", "tools_report"]

OnResult = Callable[["Task", int, "Trajectory"], None]
"""``done(task, trial, trajectory)``: called once per finished episode, in the runner's loop."""


class RunSpend:
    """The run-level cost budget: no episode starts once ``limit`` USD is spent.

    The runner adds each finished episode's cost (``spent``); an executor asks ``may_start()``
    before it starts an episode, and an episode it does not start counts in ``skipped``."""

    def __init__(self, limit: float | None = None, spent: float = 0.0) -> None:
        self.limit = limit
        self.spent = spent
        self.skipped = 0

    def allows_another(self) -> bool:
        return self.limit is None or self.spent < self.limit

    def may_start(self) -> bool:
        """Whether the next episode may start; a refusal is counted in ``skipped``."""
        if self.allows_another():
            return True
        self.skipped += 1
        return False


@dataclass
class EpisodeBatch:
    """What an executor runs: ``todo`` episodes of a run, with what every episode shares.

    ``env`` is the environment the tools are opened with (API keys of a simulator); ``spend``
    is the run's cost budget."""

    config: RunConfig
    suite: Suite
    plan: EpisodePlan
    todo: list[tuple[Task, int]]
    env: Mapping[str, str] = field(default_factory=dict)
    spend: RunSpend = field(default_factory=RunSpend)


class Executor(Protocol):
    """Runs a batch. An executor may also have ``tools_report() -> dict`` (what the run records
    about its tools: ``ToolEnvs.report``); ``tools_report(executor)`` reads it."""

    async def run(self, batch: EpisodeBatch, done: OnResult) -> None:
        """Run every episode of ``batch`` that ``batch.spend`` lets start; call ``done`` for
        each as it finishes."""
        ...


def tools_report(executor: Executor) -> dict[str, Any]:
    """What ``executor`` reports about the run's tools so far; ``{}`` when it reports nothing."""
    report = getattr(executor, "tools_report", None)
    return dict(report()) if callable(report) else {}
