"""Running episodes: ``run_suite(config)`` / ``resume_run(path)`` and their progress display.

Above ``store``, ``models``, ``tool_envs`` and ``eval``; below ``replay``, ``compare`` and
``commands``.
"""

from sandbox.run.runner import RunResult, resolve_strategy, resume_run, run_suite, run_suite_async
from sandbox.run.tasks import select_tasks

__all__ = [
    "RunResult",
    "resolve_strategy",
    "resume_run",
    "run_suite",
    "run_suite_async",
    "select_tasks",
]
