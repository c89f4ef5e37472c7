"""Helpers of the external-agent tests: whether a process has ended."""

from __future__ import annotations

import os
from pathlib import Path


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie has: only its parent, perhaps a PID 1 that
    reaps nothing, still has to collect it)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z"
