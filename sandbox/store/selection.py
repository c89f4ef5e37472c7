"""Which tasks a run covers: ids or fnmatch globs over a suite's tasks (``RunConfig.tasks``).

In the store layer because more than the runner needs it: the MCP tool transport records the
run's tasks into a suite. Pure; imports ``mock_tools`` and ``sandbox.errors`` only."""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence

from mock_tools import Task
from sandbox.errors import ConfigError

__all__ = ["select_tasks"]


def select_tasks(tasks: Sequence[Task], patterns: Sequence[str]) -> list[Task]:
    """Tasks whose id equals or fnmatch-es any pattern (comma lists allowed); all if none."""
    wanted = [p.strip() for item in patterns for p in item.split(",") if p.strip()]
    if not wanted:
        return list(tasks)
    picked = [t for t in tasks if any(t.id == p or fnmatch.fnmatchcase(t.id, p) for p in wanted)]
    unmatched = [
        p for p in wanted if not any(t.id == p or fnmatch.fnmatchcase(t.id, p) for t in tasks)
    ]
    if unmatched or not picked:
        sample = ", ".join(t.id for t in tasks[:8]) + (", ..." if len(tasks) > 8 else "")
        raise ConfigError(
            f"no task matches {', '.join(unmatched) or ', '.join(wanted)}; task ids look like: "
            f"{sample}"
        )
    return picked
