"""How much a second busy process adds on this machine now: the anchor of multi-core serving.

``parallel_speedup(seconds)`` runs the same pure-Python loop in one process, then in two at
once, each for ``seconds``, and returns the iterations the two made over those the one made.
On an idle 2-core machine that is about 2; other work on the machine (the load average) takes
its share from both. ``serve --workers 2`` cannot gain more over one worker than this, minus the
core's share the load generator needs.
"""

from __future__ import annotations

import subprocess
import sys

_SPIN = (
    "import sys, time\n"
    "end = time.perf_counter() + float(sys.argv[1])\n"
    "n = 0\n"
    "while time.perf_counter() < end:\n"
    "    for _ in range(1000):\n"
    "        n += 1\n"
    "print(n)\n"
)


def _spin(processes: int, seconds: float) -> int:
    """Iterations ``processes`` spinning processes made together in ``seconds``."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", _SPIN, str(seconds)], stdout=subprocess.PIPE, text=True
        )
        for _ in range(processes)
    ]
    return sum(int(p.communicate()[0]) for p in procs)


def parallel_speedup(seconds: float) -> float:
    """Iterations of two busy processes over one's, each run for ``seconds``."""
    one = _spin(1, seconds)
    return _spin(2, seconds) / one
