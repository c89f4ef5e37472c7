"""A ``python -m mock_tools serve`` process for tests: started on a free port, ready when its
``/health`` answers; the counting miss policy's log in its environment."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
COUNTING_POLICY = "tests.mock_tools.counting_policy:CountingPolicy"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(
    suite: Path, log: Path, *flags: str, timeout: float = 60
) -> tuple[subprocess.Popen[bytes], int]:
    """The server of ``suite`` with ``flags``, and its port; fails the test when it does not
    answer ``/health`` within ``timeout`` seconds."""
    port = free_port()
    cmd = [sys.executable, "-m", "mock_tools", "serve", str(suite), "--port", str(port), *flags]
    env = {**os.environ, "COUNTING_POLICY_LOG": str(log), "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env)
    deadline = time.monotonic() + timeout
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            return proc, port
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("the server did not start")
            time.sleep(0.1)
