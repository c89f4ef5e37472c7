"""Running an external agent: a command in its own process group, or a POST to a URL.

``run_command`` starts ``/bin/sh -c COMMAND`` in a new session (so the agent and every process
it starts share one process group), writes the task as one JSON line on its stdin and closes it,
and keeps the end of its stdout and stderr. It returns when the agent exits; when the episode
ended (``ended``: a ``Finish``, a spent budget) and the agent has not exited within ``grace``
seconds; or at the deadline. Whatever ends it, on the way out the whole group gets SIGTERM, then
SIGKILL ``grace`` seconds later (at once when the agent already exited: what it left running is
killed), so no process of the agent outlives its episode, a run stopped by Ctrl-C or SIGTERM
included (the episode's task is cancelled and this cleanup runs).

``call_url`` is the same for an agent served over HTTP: the task (with the environment a
process would get, under ``env``) is POSTed to the URL, the response body stands for stdout,
and an error status for a non-zero exit. What happened is an ``AgentExit``. May import
``httpx`` and the standard library only.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

__all__ = ["AgentExit", "Limits", "call_url", "run_command"]

Timeout = Literal["budget", "timeout"]
Process = asyncio.subprocess.Process
_CHUNK = 65536
_POLL = 0.05
"""Seconds between two looks at whether the agent's process has exited."""
_STDOUT_KEPT = 65536


@dataclass(frozen=True)
class Limits:
    """How long the agent may run, and what ends it early."""

    deadline: float
    """A ``time.monotonic()`` value."""
    timeout_kind: Timeout
    """What the deadline is: the budget's ``max_seconds``, or the strategy's ``timeout``."""
    ended: asyncio.Event
    """Set when the episode ended (a ``Finish``, a budget): the agent then has ``grace``."""
    grace: float
    stderr_chars: int


@dataclass
class AgentExit:
    """How the agent's run ended."""

    exit_code: int | None = None
    """The process's exit code (an HTTP agent: its status); None when a signal ended it."""
    signal: int | None = None
    timed_out: Timeout | None = None
    """The deadline ended it: the budget's ``max_seconds``, or the strategy's ``timeout``."""
    stopped: bool = False
    """The sandbox stopped it after its episode had ended."""
    stdout: str = ""
    """The end of its stdout (an HTTP agent: the response body)."""
    stderr: str = ""
    """The end of its stderr (an HTTP agent that failed: the end of the response body)."""
    unreachable: str | None = None
    """An HTTP agent that could not be reached: why."""
    seconds: float = 0.0

    @property
    def succeeded(self) -> bool:
        return self.exit_code == 0 and self.timed_out is None and self.unreachable is None


class _Tail:
    """The last ``limit`` bytes of a stream."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()

    async def read(self, stream: asyncio.StreamReader | None) -> None:
        if stream is None:
            return
        while True:
            chunk = await stream.read(_CHUNK)
            if not chunk:
                return
            self.data += chunk
            if len(self.data) > self.limit:
                del self.data[: len(self.data) - self.limit]

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


async def run_command(
    command: str, limits: Limits, *, stdin: bytes, env: dict[str, str], cwd: str | None
) -> AgentExit:
    """Run the agent's command for one episode (see the module docstring)."""
    started = time.monotonic()
    proc = await _spawn(command, env=env, cwd=cwd)
    stderr_chars = limits.stderr_chars
    out, err = _Tail(_STDOUT_KEPT), _Tail(max(stderr_chars, 1) * 4)
    io = [
        asyncio.ensure_future(out.read(proc.stdout)),
        asyncio.ensure_future(err.read(proc.stderr)),
        asyncio.ensure_future(_feed(proc, stdin)),
    ]
    result = AgentExit()
    try:
        await _supervise(_Leader(proc), result, limits)
    finally:
        await _stop_group(proc, limits.grace)
        await _drain(io)
    result.exit_code, result.signal = _status(proc.returncode)
    result.stdout = out.text()
    tail = err.text()
    result.stderr = tail[-stderr_chars:] if stderr_chars else ""
    result.seconds = time.monotonic() - started
    return result


async def _spawn(
    command: str, *, env: dict[str, str], cwd: str | None
) -> asyncio.subprocess.Process:
    """Start the command in a session of its own. A run stopped while the process is being
    started (the process may exist already) kills its group as soon as it does."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
    )
    try:
        return await asyncio.shield(spawn)
    except asyncio.CancelledError:
        spawn.add_done_callback(_kill_spawned)
        raise


def _kill_spawned(spawn: asyncio.Future[Process]) -> None:
    if not spawn.cancelled() and spawn.exception() is None:
        _signal_group(spawn.result(), signal.SIGKILL)


async def _feed(proc: asyncio.subprocess.Process, data: bytes) -> None:
    """The task on stdin, then EOF (an agent that does not read it is not an error)."""
    if proc.stdin is None:
        return
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.write(data)
        await proc.stdin.drain()
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        proc.stdin.close()


class _Waitable(Protocol):
    async def wait(self) -> Any: ...


async def _supervise(proc: _Waitable, result: AgentExit, limits: Limits) -> None:
    """Wait for the first of: the agent exits, the episode ends (then ``grace``), the deadline."""
    deadline, grace = limits.deadline, limits.grace
    exited = asyncio.ensure_future(proc.wait())
    over = asyncio.ensure_future(limits.ended.wait())
    try:
        remaining = max(0.0, deadline - time.monotonic())
        await asyncio.wait({exited, over}, timeout=remaining, return_when="FIRST_COMPLETED")
        if exited.done():
            return
        if over.done():
            await asyncio.wait({exited}, timeout=min(grace, max(0.0, deadline - time.monotonic())))
            result.stopped = not exited.done()
            if exited.done() or deadline > time.monotonic():
                return
        result.timed_out = limits.timeout_kind
    finally:
        over.cancel()
        exited.cancel()


def _signal_group(proc: asyncio.subprocess.Process, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


class _Leader:
    """The agent's own process, whose ``wait()`` ends when it exits. (``Process.wait()`` also
    waits for its pipes to close, which a process it left running may hold open.)"""

    def __init__(self, proc: Process) -> None:
        self.proc = proc

    async def wait(self) -> int:
        while self.proc.returncode is None:
            await asyncio.sleep(_POLL)
        return self.proc.returncode


async def _stop_group(proc: Process, grace: float) -> None:
    """SIGTERM to the agent's process group, SIGKILL after ``grace`` (at once when the agent
    exited already: only what it left behind is in the group)."""
    try:
        if proc.returncode is None:
            _signal_group(proc, signal.SIGTERM)
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(_Leader(proc).wait(), grace)
    finally:
        _signal_group(proc, signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError, ProcessLookupError):
            await asyncio.wait_for(proc.wait(), 5.0)


async def _drain(io: Sequence[asyncio.Future[Any]]) -> None:
    """Let the readers reach the end of the pipes (bounded: a process that left the group may
    hold them open)."""
    _, pending = await asyncio.wait(io, timeout=2.0)
    for task in pending:
        task.cancel()
    for task in io:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a broken pipe is no error of the episode


def _status(code: int | None) -> tuple[int | None, int | None]:
    """(exit code, signal) of a finished process (asyncio gives ``-N`` for signal ``N``)."""
    if code is None:
        return None, None
    if code < 0:
        return None, -code
    return code, None


async def call_url(url: str, payload: dict[str, Any], limits: Limits) -> AgentExit:
    """POST the task to an agent served over HTTP (see the module docstring)."""
    import httpx  # only for agents served over HTTP

    started = time.monotonic()
    result = AgentExit()
    async with httpx.AsyncClient(timeout=None) as client:
        request = asyncio.ensure_future(client.post(url, json=payload))
        process = _RequestAsProcess(request)
        try:
            await _supervise(process, result, limits)
        finally:
            request.cancel()
            with contextlib.suppress(BaseException):
                await request
    result.seconds = time.monotonic() - started
    if request.cancelled():
        return result
    error = request.exception()
    if error is not None:
        result.unreachable = f"{type(error).__name__}: {error}"
        return result
    response = request.result()
    result.exit_code = 0 if response.is_success else response.status_code
    if response.is_success:
        result.stdout = response.text[-_STDOUT_KEPT:]
    else:
        chars = limits.stderr_chars
        result.stderr = response.text[-chars:] if chars else ""
    return result


class _RequestAsProcess:
    """A pending request seen as a process by ``_supervise``: ``wait()`` is its end."""

    def __init__(self, request: asyncio.Future[Any]) -> None:
        self.request = request

    async def wait(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.shield(self.request)
