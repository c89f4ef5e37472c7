"""One mutmut run in a group's work folder, its output kept in a log file.

mutmut forks one worker per mutant from a process that has imported the tests, and runs in each
only the tests that call the mutated function (it traced them in a first, "stats" run over the
group's test selection), so a mutant costs seconds. ``jobs`` workers run at once. A run that
takes longer than ``max_seconds`` is interrupted as a user would (SIGINT): mutmut keeps every
result it has, and the rest counts as not checked.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

__all__ = ["MutmutFailed", "run_mutmut"]


class MutmutFailed(RuntimeError):
    """mutmut could not run (the tests fail without a mutant, or a setting is wrong)."""


def _mutmut() -> str:
    script = Path(sys.executable).with_name("mutmut")
    return str(script) if script.exists() else "mutmut"


def run_mutmut(
    folder: Path,
    *,
    jobs: int,
    names: Sequence[str] = (),
    max_seconds: float | None = None,
) -> bool:
    """Run mutmut in ``folder`` on every mutant (or those matching ``names``, globs allowed);
    True when it finished, False when it was cut at ``max_seconds``. Output: ``mutmut.log``."""
    log = folder / "mutmut.log"
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "TERM": "dumb"}
    env.pop("MUTANT_UNDER_TEST", None)
    command = [_mutmut(), "run", "--max-children", str(jobs), *names]
    with log.open("w", encoding="utf-8") as out:
        proc = subprocess.Popen(
            command,
            cwd=folder,
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        deadline = None if max_seconds is None else time.monotonic() + max_seconds
        finished = _wait(proc, deadline)
    if proc.returncode != 0 and finished:
        tail = log.read_text("utf-8", errors="replace").splitlines()[-15:]
        raise MutmutFailed(f"mutmut failed in {folder} (see {log}):\n" + "\n".join(tail))
    return finished


def _wait(proc: subprocess.Popen[bytes], deadline: float | None) -> bool:
    while True:
        try:
            timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
            proc.wait(timeout=timeout)
            return True
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGINT)  # mutmut stops its workers and keeps its results
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            return False
        except KeyboardInterrupt:
            os.killpg(proc.pid, signal.SIGINT)
            proc.wait()
            raise
