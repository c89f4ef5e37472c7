"""A model server this process started: on a free 127.0.0.1 port, ready when ``/v1/models``
answers, stopped with SIGTERM and then SIGKILL, never left running.

``LaunchedServer(argv_for_port, ...)``: ``await start()`` picks a free port, starts the command
under ``server_guard.py`` (which stops the server when this process ends in any way, SIGKILL
included), and waits until ``GET /v1/models`` answers 200 within ``start_timeout``; if the server
exits or the time runs out, it is stopped and ``ModelUnreachableError`` shows the tail of its
output. ``await stop()`` closes the guard's stdin: the server's process group gets SIGTERM, then
SIGKILL after ``stop_grace`` seconds. Its output goes to a log file in the temp folder, removed
after a clean stop and kept (and named in the error) after a failed start.
May import ``sandbox.errors`` only (and httpx, to ask for readiness).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from sandbox.errors import ModelUnreachableError

__all__ = ["GUARD", "LaunchedServer", "free_port", "log_tail"]

GUARD = Path(__file__).with_name("server_guard.py")
HOST = "127.0.0.1"
TAIL_LINES = 15
POLL_SECONDS = 0.25


def free_port(host: str = HOST) -> int:
    """A TCP port nothing listens on right now (the OS picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def log_tail(path: Path, lines: int = TAIL_LINES) -> str:
    """The last ``lines`` lines of a log file (empty when it cannot be read)."""
    try:
        data = path.read_bytes()[-16384:]
    except OSError:
        return ""
    text = data.decode("utf-8", "replace").rstrip()
    return "\n".join("    " + line for line in text.splitlines()[-lines:])


class LaunchedServer:
    """One started server (see the module docstring)."""

    def __init__(
        self,
        argv_for_port: Callable[[str, int], list[str]],
        *,
        name: str,
        label: str,
        start_timeout: float,
        stop_grace: float,
        host: str = HOST,
    ) -> None:
        self.argv_for_port = argv_for_port
        self.name = name
        """A short name for the log file (``llamacpp``)."""
        self.label = label
        """What messages call the server (``llama.cpp's server (llama-cpp-python)``)."""
        self.start_timeout = start_timeout
        self.stop_grace = stop_grace
        self.host = host
        self.port: int | None = None
        self.argv: list[str] = []
        self.pid: int | None = None
        """The server's pid (its process group's id)."""
        self.started_seconds: float | None = None
        """Seconds from the start of the command until ``/v1/models`` answered."""
        self._guard: subprocess.Popen[bytes] | None = None
        self._log: Path | None = None

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    async def start(self) -> str:
        """Start the server and wait until it is ready; its base URL."""
        self.port = free_port(self.host)
        self.argv = self.argv_for_port(self.host, self.port)
        fd, name = tempfile.mkstemp(prefix=f"sandbox-{self.name}-", suffix=".log")
        os.close(fd)
        self._log = Path(name)
        started = time.monotonic()
        guard = [sys.executable, str(GUARD), str(self.stop_grace), name, "--", *self.argv]
        self._guard = subprocess.Popen(
            guard, stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True
        )
        try:
            await self._read_pid()
            await self._wait_ready(started)
        except BaseException:
            await self.stop(keep_log=True)
            raise
        self.started_seconds = time.monotonic() - started
        return self.base_url

    async def _read_pid(self) -> None:
        assert self._guard is not None and self._guard.stdout is not None
        line = await asyncio.to_thread(self._guard.stdout.readline)
        if line.strip().isdigit():
            self.pid = int(line)

    async def _wait_ready(self, started: float) -> None:
        # Imported here, not at the top: httpx is not needed by runs that launch nothing.
        import httpx

        url = f"{self.base_url}/models"
        async with httpx.AsyncClient(timeout=5.0, trust_env=False) as client:
            while True:
                code = self._guard.poll() if self._guard is not None else None
                if code is not None:
                    raise self._failure(f"exited with code {code} before it answered")
                with contextlib.suppress(httpx.HTTPError):
                    if (await client.get(url)).status_code == 200:
                        return
                if time.monotonic() - started > self.start_timeout:
                    raise self._failure(f"did not answer {url} within {self.start_timeout:g} s")
                await asyncio.sleep(POLL_SECONDS)

    def _failure(self, what: str) -> ModelUnreachableError:
        tail = log_tail(self._log) if self._log else ""
        lines = [f"{self.label} {what}: {' '.join(self.argv)}"]
        lines.append(f"  its output ({self._log}), last lines:" if tail else "  it wrote nothing")
        if tail:
            lines.append(tail)
        return ModelUnreachableError("\n".join(lines))

    async def stop(self, *, keep_log: bool = False) -> None:
        """Stop the server (SIGTERM, then SIGKILL after the grace period); idempotent."""
        guard, self._guard = self._guard, None
        if guard is not None:
            with contextlib.suppress(OSError):
                if guard.stdin is not None:
                    guard.stdin.close()
            deadline = time.monotonic() + self.stop_grace + 5.0
            while guard.poll() is None and time.monotonic() < deadline:
                await asyncio.sleep(0.05)
            if guard.poll() is None:  # the guard itself is stuck: do its work
                guard.kill()
                guard.wait()
                if self.pid is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(self.pid, signal.SIGKILL)
            if guard.stdout is not None:
                guard.stdout.close()
        if self._log is not None and not keep_log:
            with contextlib.suppress(OSError):
                self._log.unlink()
            self._log = None
