"""Running episodes: ``run_suite(config)`` / ``resume_run(path)`` and their progress display.

Above ``store``, ``models``, ``tool_envs`` and ``eval``; below ``replay``, ``compare`` and
``commands``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.run.runner import (
        RunResult,
        resolve_strategy,
        resume_run,
        run_suite,
        run_suite_async,
    )
    from sandbox.run.tasks import select_tasks

_EXPORTS: dict[str, str] = {
    "RunResult": "sandbox.run.runner",
    "resolve_strategy": "sandbox.run.runner",
    "resume_run": "sandbox.run.runner",
    "run_suite": "sandbox.run.runner",
    "run_suite_async": "sandbox.run.runner",
    "select_tasks": "sandbox.run.tasks",
}

__all__ = [
    "RunResult",
    "resolve_strategy",
    "resume_run",
    "run_suite",
    "run_suite_async",
    "select_tasks",
]

lazy_package(__name__, _EXPORTS)
