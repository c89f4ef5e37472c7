"""Group commit of finished episodes: appends and ``fsync`` off the event loop, one per group.

``GroupCommit(store)`` owns a writer thread. ``submit(line, on_durable)`` queues one trajectory
line and returns at once; the thread takes every line queued so far, appends them with one
``write`` and one ``fsync`` (``RunStore.append_lines``), then calls each line's ``on_durable`` in
the event loop's thread. Episodes that finish while a group is being written make the next
group, so a run whose episodes finish together pays one ``fsync`` for them, and the loop never
waits for the disk.

An episode counts as finished (progress, ``--json`` counts, resume) only in ``on_durable``: a
process killed at any moment has reported nothing that is not on disk. A group that cannot be
written is cut from the file (``append_lines``: as many of its lines as fit are kept, whole,
and reported), none of the other callbacks runs, and the next
``submit`` or ``drain`` raises that ``RunError``: the run stops and resumes from what is durable.
A callback that raises (its progress line met a closed pipe: ``sandbox run 2>&1 | head``) does
not keep the others from running nor ``drain`` from returning: the next ``submit``, ``check`` or
``drain`` raises it, so the run stops instead of waiting for ever.
May import ``sandbox.store`` modules and ``sandbox.errors``.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import Any

from sandbox.errors import RunError
from sandbox.store.run_store import RunStore, StoreFull

__all__ = ["GroupCommit"]

OnDurable = Callable[[], None]


class GroupCommit:
    """The run folder's appender while a run runs (see the module doc). Use inside a loop."""

    def __init__(self, store: RunStore) -> None:
        self._store = store
        self._loop = asyncio.get_running_loop()
        self._cond = threading.Condition()
        self._queue: list[tuple[bytes, OnDurable]] = []
        self._closing = False
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._error: RunError | None = None
        self._report_error: Exception | None = None
        """The first exception an ``on_durable`` raised: the run stops on it (``check``)."""
        self.failed = asyncio.Event()
        """Set when a group could not be written or a callback raised (``check`` raises it)."""
        self.groups = 0
        """Groups written (one ``fsync`` each)."""
        self._thread = threading.Thread(target=self._write_groups, name="group-commit", daemon=True)
        self._thread.start()

    def submit(self, line: bytes, on_durable: OnDurable) -> None:
        """Queue ``line`` (a whole trajectory line); ``on_durable`` runs in the loop once it is
        fsynced. Raises the ``RunError`` of a group that could not be written."""
        self.check()
        self._in_flight += 1
        self._idle.clear()
        with self._cond:
            self._queue.append((line, on_durable))
            self._cond.notify()

    def check(self) -> None:
        """Raise the ``RunError`` of a group that could not be written, if one was not; else
        what an ``on_durable`` raised (a progress line that met a closed pipe), if one did."""
        if self._error is not None:
            raise self._error
        if self._report_error is not None:
            raise self._report_error

    async def drain(self) -> None:
        """Wait until every line submitted is durable (or its group failed: then raise)."""
        await self._idle.wait()
        self.check()

    def close(self) -> None:
        """Write what is queued and stop the thread (blocking; the loop need not run)."""
        with self._cond:
            self._closing = True
            self._cond.notify()
        self._thread.join()

    # -- the writer thread -----------------------------------------------------------------------

    def _write_groups(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._closing:
                    self._cond.wait()
                group, self._queue = self._queue, []
            if not group:
                return
            error: RunError | None = None
            try:
                self._store.append_lines([line for line, _ in group])
            except StoreFull as e:  # the first ``stored`` lines are on disk: report those
                self._loop_call(self._settle, group[: e.stored], None)
                group, error = group[e.stored :], e
            except RunError as e:
                error = e
            self._loop_call(self._settle, group, error)

    def _loop_call(self, *call: Any) -> None:
        # a closed loop (RuntimeError): nobody waits for these any more
        with contextlib.suppress(RuntimeError):
            self._loop.call_soon_threadsafe(*call)

    def _settle(self, group: list[tuple[bytes, OnDurable]], error: RunError | None) -> None:
        """In the loop: the group is durable (run its callbacks) or failed (keep the error)."""
        self._in_flight -= len(group)
        if error is not None:
            self._error = self._error or error
        else:
            self.groups += 1
            for _, on_durable in group:
                try:
                    on_durable()
                except Exception as e:  # e.g. stderr's reader went away: the lines are durable
                    self._report_error = self._report_error or e
        if self._error is not None or self._report_error is not None:
            self.failed.set()
            self._idle.set()
        elif self._in_flight == 0:
            self._idle.set()
