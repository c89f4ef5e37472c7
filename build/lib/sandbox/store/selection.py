"""Which tasks a run covers: ids or fnmatch globs over a suite's tasks (``RunConfig.tasks``).

In the store layer because more than the runner needs it: the MCP tool transport records the
run's tasks into a suite. Pure; imports ``mock_tools``, ``rapidfuzz`` and ``sandbox.errors``
only."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from rapidfuzz import fuzz, process

from mock_tools import Task
from sandbox.errors import ConfigError

__all__ = ["select_tasks"]


def select_tasks(tasks: Sequence[Task], patterns: Sequence[str]) -> list[Task]:
    """Tasks whose id equals or fnmatch-es any pattern (comma lists allowed); all if none given.

    A selection that was given but names nothing (``--tasks ''``), or a pattern that matches no
    task, is a ``ConfigError`` listing the closest task ids."""
    if not patterns:
        return list(tasks)
    wanted = [p.strip() for item in patterns for p in item.split(",") if p.strip()]
    if not wanted:
        raise ConfigError("--tasks names no task (it is empty); leave it out to run every task")
    picked = [t for t in tasks if any(t.id == p or fnmatch.fnmatchcase(t.id, p) for p in wanted)]
    unmatched = [
        p for p in wanted if not any(t.id == p or fnmatch.fnmatchcase(t.id, p) for t in tasks)
    ]
    if unmatched:
        ids = [t.id for t in tasks]
        near = process.extract(unmatched[0][:200], ids, scorer=fuzz.WRatio, limit=5)
        closest = ", ".join(m[0] for m in near) or "(the suite has no tasks)"
        raise ConfigError(f"no task matches {', '.join(unmatched)}; closest task ids: {closest}")
    return picked
