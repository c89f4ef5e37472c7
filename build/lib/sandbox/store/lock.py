"""``RunLock``: one writer per run folder, held for the writing process's life.

An OS lock (``flock``) on ``<run>/.lock``, which also holds the owner's process id for the
message a second writer gets ("run X is in use by process N"). The kernel releases the lock when
the process dies, however it dies, so a stale lock of a killed process is simply taken over.
Readers (eval, replay, the viewer) take no lock. Imports ``sandbox.errors`` only.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from sandbox.errors import RunError

__all__ = ["LOCK_FILE", "RunLock"]

LOCK_FILE = ".lock"


class RunLock:
    def __init__(self, folder: Path, run_id: str) -> None:
        self.path = folder / LOCK_FILE
        self.run_id = run_id
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock, or ``RunError`` naming the process that holds it."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as e:
            raise RunError(f"cannot lock run {self.run_id} ({self.path}): {e.strerror}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            owner = os.pread(fd, 32, 0).decode("ascii", "replace").strip() or "?"
            os.close(fd)
            raise RunError(
                f"run {self.run_id} is in use by process {owner}; wait for it to end (or stop "
                "it) before resuming"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is None:
            return
        # a full or read-only disk may refuse this; the lock itself goes with the descriptor
        with contextlib.suppress(OSError):
            os.ftruncate(self._fd, 0)
        fcntl.flock(self._fd, fcntl.LOCK_UN)
        os.close(self._fd)
        self._fd = None

    def owner(self) -> int | None:
        """The process holding the lock now, if any (without taking it)."""
        if self._fd is not None:
            return os.getpid()
        if not self.path.is_file():
            return None
        fd = os.open(self.path, os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
                return int(text) if text.isdigit() else -1
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)
