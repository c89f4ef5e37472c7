"""``run_blocking``: a command's coroutine run to its end with a bounded shutdown.

What it keeps of ``asyncio.run``: the result, the exception, Ctrl-C (cancel, then
``KeyboardInterrupt``), the handler of SIGINT put back, tasks left behind cancelled and awaited.
What it bounds: a task that ignores its cancellation and a thread that never ends are named and
left behind after the grace, never waited for.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import signal
import threading
import time
from typing import Any

import pytest

from sandbox.eval.blocking import SHUTDOWN_GRACE, run_blocking


async def _stubborn(started: asyncio.Event) -> None:
    started.set()
    while True:
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(3600)


def test_the_result_comes_back_and_the_loop_is_closed_and_unset() -> None:
    seen: list[asyncio.AbstractEventLoop] = []

    async def job() -> int:
        seen.append(asyncio.get_running_loop())
        return 7

    assert run_blocking(job()) == 7
    assert seen[0].is_closed()
    with pytest.raises(RuntimeError):
        asyncio.get_event_loop_policy().get_event_loop()


def test_what_the_coroutine_raises_comes_back() -> None:
    async def job() -> None:
        raise ValueError("no")

    with pytest.raises(ValueError, match="no"):
        run_blocking(job())


def test_a_task_left_behind_is_cancelled_and_awaited_without_a_warning() -> None:
    cleaned: list[str] = []

    async def polite() -> None:
        try:
            await asyncio.sleep(3600)
        finally:
            await asyncio.sleep(0.05)  # its cleanup still runs: it is awaited
            cleaned.append("yes")

    async def job() -> str:
        asyncio.get_running_loop().create_task(polite())
        await asyncio.sleep(0)
        return "done"

    warn = io.StringIO()
    started = time.monotonic()
    assert run_blocking(job(), warn=warn) == "done"
    assert cleaned == ["yes"] and warn.getvalue() == ""
    assert time.monotonic() - started < SHUTDOWN_GRACE


def test_a_task_that_ignores_its_cancellation_is_named_and_left_after_the_grace() -> None:
    """With asyncio.run this never returned."""

    async def job() -> str:
        started = asyncio.Event()
        asyncio.get_running_loop().create_task(_stubborn(started), name="strategy Stubborn.run")
        await started.wait()
        return "scored"

    warn = io.StringIO()
    started = time.monotonic()
    assert run_blocking(job(), grace=0.3, warn=warn) == "scored"
    took = time.monotonic() - started
    assert 0.3 <= took < 10, took
    (line,) = warn.getvalue().splitlines()
    assert line.startswith("warning: strategy Stubborn.run (waiting at test_run_blocking.py:")
    assert line.endswith("ignored its cancellation when the command ended; leaving it running")


def test_an_unnamed_task_is_named_by_its_coroutine() -> None:
    async def job() -> None:
        started = asyncio.Event()
        asyncio.get_running_loop().create_task(_stubborn(started))
        await started.wait()

    warn = io.StringIO()
    run_blocking(job(), grace=0.1, warn=warn)
    assert warn.getvalue().startswith("warning: task _stubborn (waiting at test_run_blocking.py:")


def test_a_thread_that_does_not_end_is_named_and_not_waited_for() -> None:
    release = threading.Event()

    async def job() -> None:
        asyncio.get_running_loop().run_in_executor(None, release.wait)
        await asyncio.sleep(0.05)

    warn = io.StringIO()
    started = time.monotonic()
    try:
        run_blocking(job(), grace=0.3, warn=warn)
    finally:
        release.set()
    assert time.monotonic() - started < 10
    assert "warning: thread 'command-loop_0' (a call handed to a thread) was still running" in (
        warn.getvalue()
    )


def test_a_thread_that_ends_within_the_grace_is_waited_for() -> None:
    async def job() -> None:
        asyncio.get_running_loop().run_in_executor(None, time.sleep, 0.2)

    warn = io.StringIO()
    before = {t for t in threading.enumerate() if t.name.startswith("command-loop")}
    run_blocking(job(), grace=5, warn=warn)
    after = {t for t in threading.enumerate() if t.name.startswith("command-loop")}
    assert warn.getvalue() == "" and after <= before


def test_ctrl_c_cancels_the_coroutine_then_raises_keyboard_interrupt() -> None:
    unwound: list[str] = []

    async def job() -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            unwound.append("cancelled")
            raise

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_blocking(job())
    assert unwound == ["cancelled"] and time.monotonic() - started < 10
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_coroutine_cancelled_without_ctrl_c_is_a_cancellation() -> None:
    async def job() -> None:
        raise asyncio.CancelledError

    with pytest.raises(asyncio.CancelledError):
        run_blocking(job())
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


def test_a_second_ctrl_c_raises_at_once() -> None:
    """The coroutine catches the first cancellation and goes on: the second Ctrl-C ends it."""

    async def job() -> None:
        os.kill(os.getpid(), signal.SIGINT)
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            os.kill(os.getpid(), signal.SIGINT)
            await asyncio.sleep(30)

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        run_blocking(job(), grace=0.2, warn=io.StringIO())
    assert time.monotonic() - started < 10


def test_a_handler_of_sigint_of_the_callers_own_is_left_alone() -> None:
    calls: list[int] = []

    def mine(signum: int, frame: Any) -> None:
        calls.append(signum)

    async def job() -> str:
        os.kill(os.getpid(), signal.SIGINT)
        await asyncio.sleep(0.1)
        return "ran on"

    previous = signal.signal(signal.SIGINT, mine)
    try:
        assert run_blocking(job()) == "ran on"
        assert signal.getsignal(signal.SIGINT) is mine and calls == [signal.SIGINT]
    finally:
        signal.signal(signal.SIGINT, previous)


def test_what_a_task_raises_while_cancelled_at_the_end_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    async def fails_when_stopped() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            raise ValueError("broke while stopping") from None

    async def job() -> None:
        asyncio.get_running_loop().create_task(fails_when_stopped())
        await asyncio.sleep(0)

    warn = io.StringIO()
    with caplog.at_level("ERROR", logger="asyncio"):
        run_blocking(job(), warn=warn)
    assert "unhandled exception while the command shut down" in caplog.text
    assert "broke while stopping" in caplog.text and warn.getvalue() == ""
