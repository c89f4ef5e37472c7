"""Keeps a launched model server from outliving the process that launched it.

Run as a script (never imported by the project, so it starts without the project's imports)::

    python server_guard.py GRACE LOG -- COMMAND [ARG...]

It starts ``COMMAND`` in a session of its own (so the server's own children share its process
group), with stdout and stderr appended to ``LOG``, prints the server's pid on one line of its
stdout, then waits until the launcher closes the guard's stdin, the guard gets SIGTERM, or the
server exits. The launcher never closes stdin but to stop the server, and the system closes it
when the launcher dies however it dies (SIGKILL, a crash; the guard then also removes the log,
which nobody will read), so a server is always stopped: its
process group, and every process below the guard (the guard is the subreaper of what the
server starts, so a child that started a session of its own and lost its parent is still
below it), gets SIGTERM, then SIGKILL after ``GRACE`` seconds if anything of it is left (a
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

PR_SET_CHILD_SUBREAPER = 36


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


def _adopt_orphans() -> None:
    """Become the subreaper of what the server starts (Linux): a child it leaves behind, even
    in a session of its own after its parent exited, is re-parented to this guard instead of
    to init, so ``_descendants`` still finds it."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def _descendants() -> set[int]:
    """Every live process below this guard (read from /proc; empty without it)."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if not name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{name}/stat", "rb") as fh:
                    fields = fh.read().decode("ascii", "replace").rsplit(")", 1)[1].split()
                if fields[0] != "Z":
                    children.setdefault(int(fields[1]), []).append(int(name))
    found: set[int] = set()
    todo = [os.getpid()]
    while todo:
        for pid in children.get(todo.pop(), []):
            if pid not in found:
                found.add(pid)
                todo.append(pid)
    return found


def _signal_all(pgid: int, signum: int) -> set[int]:
    """``signum`` to the server's group and to every process below the guard (a child the
    server started in a session of its own too); the pids signalled."""
    _signal_group(pgid, signum)
    found = _descendants()
    for pid in found:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signum)
    return found


def _reap() -> None:
    """Collect the adopted processes that ended (the server itself is ``Popen``'s)."""
    with contextlib.suppress(ChildProcessError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def stop_group(child: subprocess.Popen[bytes], grace: float) -> None:
    """SIGTERM to the server's group and everything it started, then SIGKILL after ``grace``
    seconds if any of it lives."""
    pgid = child.pid
    _signal_all(pgid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline:
        child.poll()
        _reap()
        if not _group_alive(pgid) and not _descendants():
            break
        time.sleep(0.05)
    _signal_all(pgid, signal.SIGKILL)
    child.wait()
    _reap()


def main(argv: list[str]) -> int:
    if len(argv) < 5 or argv[3] != "--":
        print("usage: server_guard.py GRACE LOG -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    grace, log, command = float(argv[1]), argv[2], argv[4:]
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    stop = threading.Event()  # set by SIGTERM; no thread waits on it
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    _adopt_orphans()
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
