"""``sandbox serve SUITE --mcp`` in a subprocess on 127.0.0.1, for the MCP tests."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SUITE = ROOT / "scenarios" / "default"


def start_server(suite: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    """``sandbox serve SUITE --mcp`` on 127.0.0.1:port, returned once /health answers."""
    cmd = [sys.executable, "-m", "sandbox", "serve", str(suite), "--mcp", "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--log-level", "warning", *extra], cwd=ROOT)
    deadline = time.monotonic() + 90
    while True:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/health", timeout=1).status_code == 200:
                return proc
        except httpx.HTTPError:
            pass
        if proc.poll() is not None or time.monotonic() > deadline:
            proc.kill()
            pytest.fail("sandbox serve --mcp did not start")
        time.sleep(0.2)


def stop_server(proc: subprocess.Popen[bytes]) -> None:
    """Stop the server (SIGTERM, then SIGKILL after 20 s)."""
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
