"""CPU seconds a process tree and this process's waited children have used (Linux ``/proc``).

``tree_cpu(pid)``: user + system seconds of ``pid`` and every live descendant (a server and its
worker processes). ``children_cpu()``: user + system seconds of this process's children that have
been waited for (a load generator run with ``subprocess.run``). Measured before and after a load,
their differences say how much CPU the server and the load generator spent on it.
"""

from __future__ import annotations

import os
import resource
from pathlib import Path

__all__ = ["children_cpu", "tree_cpu"]

_TICK = os.sysconf("SC_CLK_TCK")


def _stats() -> dict[int, tuple[int, float]]:
    """Every live process's parent pid and CPU seconds (utime + stime)."""
    out: dict[int, tuple[int, float]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            text = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        fields = text.rsplit(")", 1)[1].split()
        # after the name: state ppid ... utime (14th field of the line) stime (15th)
        out[int(entry.name)] = (int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK)
    return out


def tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and its live descendants."""
    stats = _stats()
    tree, grown = {pid}, True
    while grown:
        grown = False
        for child, (parent, _) in stats.items():
            if parent in tree and child not in tree:
                tree.add(child)
                grown = True
    return sum(stats[p][1] for p in tree if p in stats)


def children_cpu() -> float:
    """CPU seconds of this process's waited-for children."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime
