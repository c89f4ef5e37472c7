"""``python -m mock_tools serve``: the access log is off unless ``--access-log`` is given."""

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


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve_and_call(suite_dir: Path, *flags: str) -> str:
    """Serve the suite, make one call, stop the server; what it printed."""
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "mock_tools", "serve", str(suite_dir), "--port", str(port)]
    proc = subprocess.Popen(
        [*cmd, *flags], cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                r = httpx.post(f"http://127.0.0.1:{port}/tools/shop/id", json={}, timeout=5)
                break
            except httpx.TransportError:
                assert proc.poll() is None and time.monotonic() < deadline, "no server"
                time.sleep(0.1)
        assert r.status_code == 200 and r.json()["body"] == {"id": 7}
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=15)
    return out.decode()


@pytest.mark.parametrize(("flags", "logged"), [((), False), (("--access-log",), True)])
def test_access_log_only_when_asked(suite_dir: Path, flags: tuple[str, ...], logged: bool) -> None:
    out = _serve_and_call(suite_dir, *flags)
    assert ("POST /tools/shop/id" in out) is logged, out
