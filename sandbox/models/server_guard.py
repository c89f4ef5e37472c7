"""Keeps a launched model server from outliving the process that launched it.

Run as a script (never imported by the project, so it starts without the project's imports)::

    python server_guard.py GRACE LOG -- COMMAND [ARG...]

It starts ``COMMAND`` in a session of its own (so the server's own children share its process
group), with stdout and stderr appended to ``LOG``, prints the server's pid on one line of its
stdout, then waits until the launcher closes the guard's stdin, the guard gets SIGTERM, or the
server exits. The launcher never closes stdin but to stop the server, and the system closes it
when the launcher dies however it dies (SIGKILL, a crash; the guard then also removes the log,
which nobody will read), so a server is always stopped: its
process group gets SIGTERM, then SIGKILL after ``GRACE`` seconds if anything of it is left (a
server that ignores SIGTERM, or one still finishing a generation). Ctrl-C is ignored here: the
launcher decides. The guard exits with the server's exit code (or 128 + the signal).
Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import subprocess
import sys
import threading
import time


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # pragma: no cover - a process of another user took the id
        return False
    return True


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def stop_group(child: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the server's group, then SIGKILL after ``grace`` seconds if any of it lives."""
    pgid = child.pid
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        child.poll()
        if not _group_alive(pgid):
            break
        time.sleep(0.05)
    _signal_group(pgid, signal.SIGKILL)
    child.wait()


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        print("usage: server_guard.py GRACE LOG -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    grace, log, command = float(argv[1]), argv[2], argv[4:]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop = threading.Event()  # set by SIGTERM; no thread waits on it
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with open(log, "ab") as out:
        try:
            child = subprocess.Popen(
                command, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True
            )
        except OSError as e:
            out.write(f"cannot start {command[0]}: {e}\n".encode())
            return 127
    launcher = os.getppid()
    print(child.pid, flush=True)
    while not stop.is_set() and child.poll() is None:
        readable, _, _ = select.select([sys.stdin], [], [], 0.1)
        if readable and not os.read(sys.stdin.fileno(), 4096):
            break  # EOF: the launcher closed its end, or is gone
    stop_group(child, grace)
    if os.getppid() != launcher:  # the launcher died: nobody will read the log
        with contextlib.suppress(OSError):
            os.unlink(log)
    code = child.returncode
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
