"""Whether a process is still there, for the tests of servers that must not outlive their run.

A zombie (killed, not yet reaped by a parent that may itself be gone) counts as stopped.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[-1].split()[0]
    except (OSError, IndexError):
        return True
    return state != "Z"


def wait_gone(pid: int, seconds: float) -> bool:
    """True once ``pid`` is gone (or a zombie), False if it still runs after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return not alive(pid)
