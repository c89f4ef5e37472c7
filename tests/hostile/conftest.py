"""Helpers of the hostile-use regression tests: a slow model endpoint and `sandbox` subprocesses."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from tests.agents.models.openai_server import ScriptedOpenAIServer, finish_reply, slow

ROOT = Path(__file__).resolve().parents[2]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"


@pytest.fixture
def slow_model() -> Iterator[ScriptedOpenAIServer]:
    """An endpoint that answers every request with Finish after 0.4 s."""
    with ScriptedOpenAIServer() as server:
        server.default = lambda body: slow(finish_reply("It is done."), 0.4)
        yield server


def sandbox(*args: str, cwd: Path = ROOT) -> subprocess.Popen[bytes]:
    """``python -m sandbox ARGS`` in a subprocess (stdout and stderr piped)."""
    paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    return subprocess.Popen(
        [sys.executable, "-m", "sandbox", *args],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def lines(file: Path) -> list[str]:
    return [x for x in file.read_text().split("\n")[:-1] if x] if file.exists() else []


def wait_for_lines(file: Path, n: int, proc: subprocess.Popen[bytes], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while len(lines(file)) < n:
        assert proc.poll() is None, proc.communicate()[1].decode()
        assert time.monotonic() < deadline, f"the run never wrote {n} episodes"
        time.sleep(0.02)


@contextlib.contextmanager
def serving(app: Any) -> Iterator[str]:
    """``app`` served by uvicorn on a free 127.0.0.1 port in a thread; yields its base URL and
    stops it on exit."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
