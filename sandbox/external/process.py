"""Running an external agent's command: in its own process group, and never outliving its episode.

``run_command`` starts ``/bin/sh -c COMMAND`` in a new session (so the agent and every process
it starts share one process group), writes the task as one JSON line on its stdin and closes it,
and keeps the end of its stdout and stderr. It returns when the agent exits; when the episode
ended (``Limits.ended``: a ``Finish``, a spent budget) and the agent has not exited within
``grace`` seconds; or at the deadline. Whatever ends it, on the way out every process of the
agent (its group and session, their descendants, a child that started a session of its own
included, and strays holding the episode's marker: ``sandbox.external.peer``) gets SIGTERM,
then SIGKILL ``grace`` seconds later (at once when the agent already exited: what it left
running is killed), so no process of the agent outlives its episode, a run stopped by
Ctrl-C or SIGTERM included (the episode's task is cancelled and this cleanup runs).

The process is started synchronously (``subprocess.Popen``), so there is no moment at which it
exists and the episode does not know it; its exit is waited for by a thread of its own (its own
exit, not its pipes': a process it left running may hold them open), and its pipes are read by
the event loop. ``supervise`` is shared with the HTTP agent (``sandbox.external.http_agent``).
What happened is an ``AgentExit``. May import the standard library and
``sandbox.external.peer``.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import IO, Any, Literal, Protocol

from sandbox.external.peer import EpisodeProcesses

__all__ = ["STDOUT_KEPT", "AgentExit", "Limits", "Tail", "run_command", "supervise"]

Timeout = Literal["budget", "timeout"]
_CHUNK = 65536
STDOUT_KEPT = 4 * 2**20
"""Bytes of the end of the agent's stdout kept (4 MiB): its last line is its answer, so this is
the longest answer line read; a longer one ends the episode ``agent_answer_too_long``."""


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
    stdout_cut: bool = False
    """Its stdout was longer than ``STDOUT_KEPT``: ``stdout`` lost its beginning."""
    stderr: str = ""
    """The end of its stderr (an HTTP agent that failed: the end of the response body)."""
    unreachable: str | None = None
    """An HTTP agent that could not be reached: why."""
    seconds: float = 0.0


class Tail:
    """The last ``limit`` bytes of a stream."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.cut = False
        """Bytes were dropped from the front."""

    async def read(self, stream: asyncio.StreamReader) -> None:
        while True:
            chunk = await stream.read(_CHUNK)
            if not chunk:
                return
            self.add(chunk)

    def add(self, chunk: bytes) -> None:
        self.data += chunk[-self.limit :]
        if len(self.data) > self.limit or len(chunk) > self.limit:
            self.cut = True
            del self.data[: len(self.data) - self.limit]

    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


class _Agent:
    """The agent's process: its processes, and the event of its own exit."""

    def __init__(
        self, command: str, *, env: dict[str, str], cwd: str | None, marker: bytes
    ) -> None:
        self.popen = subprocess.Popen(
            ["/bin/sh", "-c", command],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            cwd=cwd,
            start_new_session=True,
        )
        self.group = EpisodeProcesses(self.popen.pid, marker)
        self.exited = asyncio.Event()
        loop = asyncio.get_running_loop()
        reaper = threading.Thread(target=self._reap, args=(loop,), daemon=True)
        reaper.start()

    def _reap(self, loop: asyncio.AbstractEventLoop) -> None:
        self.popen.wait()
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits any more
            loop.call_soon_threadsafe(self.exited.set)

    async def wait(self) -> None:
        await self.exited.wait()

    async def stop(self, grace: float) -> None:
        """SIGTERM to the agent's processes, SIGKILL after ``grace`` (at once when the agent
        exited already: only what it left behind is left). Its processes are its group, its
        session, their descendants (a child in a session of its own too) and whatever still
        holds the episode's marker in its environment (``sandbox.external.peer``)."""
        try:
            if not self.exited.is_set():
                self.group.signal_all(signal.SIGTERM)
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(self.wait(), grace)
        finally:
            self.group.signal_all(signal.SIGKILL)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.wait(), 5.0)


async def run_command(
    command: str,
    limits: Limits,
    *,
    stdin: bytes,
    env: dict[str, str],
    cwd: str | None,
    marker: bytes = b"",
    on_start: Callable[[EpisodeProcesses], None] | None = None,
) -> AgentExit:
    """Run the agent's command for one episode (see the module docstring). ``marker`` is text
    of ``env`` no other process has (stray processes holding it are stopped with the agent);
    ``on_start`` is told the agent's processes as soon as it is started."""
    started = time.monotonic()
    try:
        agent = _Agent(command, env=env, cwd=cwd, marker=marker)
    except OSError as e:  # a working directory that is not there, no /bin/sh
        return AgentExit(exit_code=127, stderr=f"cannot start the agent: {e}")
    if on_start is not None:
        on_start(agent.group)
    out, err = Tail(STDOUT_KEPT), Tail(max(limits.stderr_chars, 1) * 4)
    io: list[asyncio.Future[Any]] = []
    result = AgentExit()
    try:
        assert agent.popen.stdout and agent.popen.stderr and agent.popen.stdin
        io.append(asyncio.ensure_future(out.read(await _reader(agent.popen.stdout))))
        io.append(asyncio.ensure_future(err.read(await _reader(agent.popen.stderr))))
        await _feed(agent.popen.stdin, stdin)
        await supervise(agent, result, limits)
    finally:
        await agent.stop(limits.grace)
        await _drain(io)
    result.exit_code, result.signal = _status(agent.popen.returncode)
    result.stdout, result.stdout_cut = out.text(), out.cut
    chars = limits.stderr_chars
    result.stderr = err.text()[-chars:] if chars else ""
    result.seconds = time.monotonic() - started
    return result


async def _reader(pipe: IO[bytes]) -> asyncio.StreamReader:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=_CHUNK)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), pipe)
    return reader


async def _feed(pipe: IO[bytes], data: bytes) -> None:
    """The task on stdin, then end of file (written by the loop: an agent that does not read
    it is not an error)."""
    loop = asyncio.get_running_loop()
    transport, _ = await loop.connect_write_pipe(asyncio.Protocol, pipe)
    transport.write(data)
    transport.close()  # after what is buffered is written


class Waitable(Protocol):
    async def wait(self) -> Any: ...


async def supervise(agent: Waitable, result: AgentExit, limits: Limits) -> None:
    """Wait for the first of: the agent ends, the episode ends (then ``grace``), the deadline;
    record in ``result`` whether the deadline or the sandbox ended it."""
    deadline, grace = limits.deadline, limits.grace
    exited = asyncio.ensure_future(agent.wait())
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


async def _drain(io: Sequence[asyncio.Future[Any]]) -> None:
    """Let the readers reach the end of the pipes (bounded: a process that left the group may
    hold them open)."""
    if not io:
        return
    _, pending = await asyncio.wait(io, timeout=2.0)
    for task in pending:
        task.cancel()
    for task in io:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: a broken pipe is no error of the episode


def _status(code: int | None) -> tuple[int | None, int | None]:
    """(exit code, signal) of a finished process (``Popen`` gives ``-N`` for signal ``N``)."""
    if code is None:
        return None, None
    if code < 0:
        return None, -code
    return code, None
