"""The per-call time limit of world code: each call runs on a worker thread, and one that runs
past the limit is abandoned so no world code ever hangs a run.

``CallRunner.run(fn)`` runs ``fn`` on the runner's worker thread and waits at most ``seconds``.
Past that, the caller gets ``CallLimitExceeded`` at once; the runaway call gets ``CallTimedOut``
raised inside it (``PyThreadState_SetAsyncExc``: delivered between two bytecodes, so a Python
loop stops there), and the runner moves to a fresh worker thread, so calls after it never wait
behind it. Code stuck inside one C call (a huge regular expression) cannot be interrupted that
way: its thread is left to finish on its own (a daemon thread), and the run goes on.
Imports the worlds' errors only.
"""

from __future__ import annotations

import asyncio
import ctypes
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from mock_tools.worlds.errors import CallTimedOut

__all__ = ["DEFAULT_CALL_SECONDS", "CallLimitExceeded", "CallRunner"]

T = TypeVar("T")

DEFAULT_CALL_SECONDS = 10.0


class CallLimitExceeded(Exception):
    """A world call ran past the limit (the caller's side)."""


class CallRunner:
    """World calls on a worker thread, each bounded by ``seconds``."""

    def __init__(self, seconds: float = DEFAULT_CALL_SECONDS) -> None:
        if not seconds > 0:
            raise ValueError("the call limit must be positive")
        self.seconds = seconds
        self._pool = self._new_pool()
        self.abandoned = 0
        """Calls given up on because they ran past the limit."""

    @staticmethod
    def _new_pool() -> ThreadPoolExecutor:
        return ThreadPoolExecutor(max_workers=1, thread_name_prefix="world-call")

    async def run(self, fn: Callable[[], T]) -> T:
        """``fn()`` on the worker thread; ``CallLimitExceeded`` past the limit."""
        box: dict[str, int] = {}
        done = threading.Event()

        def call() -> T:
            box["thread"] = threading.get_ident()
            try:
                return fn()
            finally:
                done.set()

        def guarded() -> T:
            try:
                return call()
            except CallTimedOut as e:  # delivered after fn returned: the caller gave up on it
                raise CallLimitExceeded("the world call ran past its limit") from e

        pool = self._pool
        future = asyncio.get_running_loop().run_in_executor(pool, guarded)
        try:
            return await asyncio.wait_for(asyncio.shield(future), self.seconds)
        except (asyncio.TimeoutError, TimeoutError):
            self.abandoned += 1
            self._pool = self._new_pool()
            pool.shutdown(wait=False)
            thread = box.get("thread")
            if thread is not None and not done.is_set():
                _interrupt(thread)
            future.add_done_callback(_quiet)
            raise CallLimitExceeded(
                f"the world call ran past its limit of {self.seconds:g} s"
            ) from None

    def close(self) -> None:
        self._pool.shutdown(wait=False)


def _interrupt(thread_id: int) -> None:
    ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(CallTimedOut)
    )


def _quiet(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # retrieved: an abandoned call's end is nobody's error
