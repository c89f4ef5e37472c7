"""``run_blocking``: a command's coroutine run to its end on an event loop of its own, with a
bounded shutdown.

It behaves as ``asyncio.run`` does while the coroutine runs: the first Ctrl-C cancels it and
then raises ``KeyboardInterrupt`` (the command's exit 130); a second one raises at once. It
differs at the end. ``asyncio.run`` cancels the tasks still running and waits for them forever,
so a plugin strategy that catches its ``CancelledError`` and awaits again kept the process alive
after its run was recorded and scored (the wall clock had already stopped waiting for it). Here
the tasks left are cancelled and given ``SHUTDOWN_GRACE`` seconds. Any task still running after
that is named on stderr and left behind, and the loop is closed without it, so the command ends
with its own exit code. The loop's default executor and its async generators get the same
bound. The threads of that executor are not waited for past the grace either. A thread still
running then (a plugin's blocking call handed to ``asyncio.to_thread`` that never returns) is
named, but Python joins such threads at exit, so it still holds the process. ``os._exit`` would
end it, but only from the command line's last line, after every file and stream is flushed.
Only a thread a plugin never lets go needs that, so it is left out: the warning says which
thread holds the process. May import nothing of the project.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import signal
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterable
from pathlib import Path
from types import FrameType
from typing import Any, TextIO, TypeVar

__all__ = ["SHUTDOWN_GRACE", "run_blocking"]

T = TypeVar("T")

SHUTDOWN_GRACE = 3.0
"""Seconds the tasks still running when a command's coroutine has ended have to end once
cancelled (a cooperative task ends within milliseconds), and then the default executor's
threads to end."""

_ASYNCIO = str(Path(asyncio.__file__).parent)
_THREADS = "command-loop"
"""The name of the default executor's threads start with it."""


def run_blocking(
    job: Coroutine[Any, Any, T], *, grace: float = SHUTDOWN_GRACE, warn: TextIO | None = None
) -> T:
    """What ``job`` returns, run on a new event loop that is closed afterwards. Tasks that do not
    end within ``grace`` seconds of their cancellation at the end are named on ``warn`` (stderr)
    and left behind.

    The result is not handed back through the task that runs ``job``: a task's repr holds its
    result, and building the repr of a run's scores took 0.7 s for 10,000 episodes."""
    kept: list[T] = []

    async def keep() -> None:
        kept.append(await job)

    loop = asyncio.new_event_loop()
    started = set(threading.enumerate())
    executor = concurrent.futures.ThreadPoolExecutor(thread_name_prefix=_THREADS)
    loop.set_default_executor(executor)
    asyncio.set_event_loop(loop)
    try:
        _run_main(loop, keep())
    finally:
        try:
            _shut_down(loop, executor, started, grace, warn or sys.stderr)
        finally:
            asyncio.set_event_loop(None)
            loop.close()
    return kept[0]


def _run_main(loop: asyncio.AbstractEventLoop, main: Coroutine[Any, Any, None]) -> None:
    """``main`` run to its end; Ctrl-C as ``asyncio.run`` takes it."""
    task = loop.create_task(main)
    interrupts = 0

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal interrupts
        interrupts += 1
        if interrupts == 1 and not task.done():
            task.cancel()
            loop.call_soon_threadsafe(lambda: None)  # wake the loop up to deliver it
            return
        raise KeyboardInterrupt

    handles_sigint = (
        threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    )
    if handles_sigint:
        signal.signal(signal.SIGINT, on_sigint)
    try:
        loop.run_until_complete(task)
    except asyncio.CancelledError:
        uncancel: Callable[[], int] | None = getattr(task, "uncancel", None)  # Python >= 3.11
        if interrupts and (uncancel is None or uncancel() == 0):
            raise KeyboardInterrupt from None
        raise
    finally:
        if handles_sigint and signal.getsignal(signal.SIGINT) is on_sigint:
            signal.signal(signal.SIGINT, signal.default_int_handler)


def _shut_down(
    loop: asyncio.AbstractEventLoop,
    executor: concurrent.futures.ThreadPoolExecutor,
    started: set[threading.Thread],
    grace: float,
    warn: TextIO,
) -> None:
    """The tasks left cancelled, the async generators closed and the executor shut down, each
    given ``grace`` seconds; whatever is still running then is named on ``warn``."""
    left = [t for t in asyncio.all_tasks(loop) if not t.done()]
    for task in left:
        task.cancel()
    stuck = _within(loop, left, grace)
    for task in left:
        if task.done() and not task.cancelled() and task.exception() is not None:
            loop.call_exception_handler(
                {
                    "message": "unhandled exception while the command shut down",
                    "exception": task.exception(),
                    "task": task,
                }
            )
    for task in stuck:
        print(
            f"warning: {_named(task)} ignored its cancellation when the command ended; "
            "leaving it running",
            file=warn,
        )
    if stuck:
        _quiet_when_destroyed(loop, stuck)
    generators = loop.create_task(loop.shutdown_asyncgens())
    if _within(loop, [generators], grace):
        generators.cancel()
        print("warning: an async generator did not close when the command ended", file=warn)
        _quiet_when_destroyed(loop, [generators])
    executor.shutdown(wait=False, cancel_futures=True)
    for thread in _threads_left(started, grace):
        print(
            f"warning: thread {thread.name!r} (a call handed to a thread) was still running when "
            "the command ended; the process ends when it does",
            file=warn,
        )


def _within(
    loop: asyncio.AbstractEventLoop, tasks: list[asyncio.Task[Any]], grace: float
) -> list[asyncio.Task[Any]]:
    """The ``tasks`` not done after waiting ``grace`` seconds at most for them all."""
    if tasks:
        loop.run_until_complete(asyncio.wait(tasks, timeout=grace))
    return [t for t in tasks if not t.done()]


def _quiet_when_destroyed(
    loop: asyncio.AbstractEventLoop, tasks: Iterable[asyncio.Task[Any]]
) -> None:
    """No "Task was destroyed but it is pending!" for the ``tasks`` already named: they are
    left behind on purpose. Every other report goes on as before."""
    named = {id(t) for t in tasks}
    before = loop.get_exception_handler()

    def handler(this: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
        if id(context.get("task")) in named:
            return
        if before is not None:
            before(this, context)
        else:
            this.default_exception_handler(context)

    loop.set_exception_handler(handler)


def _threads_left(started: set[threading.Thread], grace: float) -> list[threading.Thread]:
    """The default executor's threads started since ``started`` that are still running after
    ``grace`` seconds of waiting for them all (they are no daemons: they hold the process)."""
    deadline = time.monotonic() + grace
    left = []
    for thread in threading.enumerate():
        if thread in started or not thread.name.startswith(_THREADS):
            continue
        thread.join(timeout=max(0.0, deadline - time.monotonic()))
        if thread.is_alive():
            left.append(thread)
    return left


def _named(task: asyncio.Task[Any]) -> str:
    """A task as a warning names it: the strategy or coroutine, and where its own code waits."""
    name = task.get_name()
    what = name if name.startswith("strategy ") else f"task {_qualname(task.get_coro())}"
    where = _waiting_at(task.get_coro())
    return f"{what} (waiting at {where})" if where else what


def _qualname(coro: object) -> str:
    return str(getattr(coro, "__qualname__", type(coro).__name__))


def _waiting_at(coro: object) -> str:
    """``file:line`` of the innermost frame of ``coro``'s chain of awaits outside asyncio."""
    where = ""
    while coro is not None:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None and not frame.f_code.co_filename.startswith(_ASYNCIO):
            where = f"{Path(frame.f_code.co_filename).name}:{frame.f_lineno}"
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return where
