"""``serve --workers N``: N processes answer on one port, and a miss asked of several of them at
once is answered by one miss-policy call (the overlay's claims), its stored answer served by all.
Options that cannot be shared between processes are refused with a one-line error."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from mock_tools.overlay import OverlayStore
from tests.mock_tools.serve_process import COUNTING_POLICY, ROOT, start_server

MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
pytestmark = pytest.mark.skipif(
    not hasattr(__import__("socket"), "SO_REUSEPORT"), reason="no SO_REUSEPORT on this platform"
)


async def _call(port: int, parcel: str) -> dict:
    """One unrecorded call on a connection of its own (so the kernel picks a worker for it)."""
    async with httpx.AsyncClient(timeout=30) as client:
        url = f"http://127.0.0.1:{port}/tools/shipping/track_parcel"
        response = await client.post(url, json={"parcel_id": parcel})
    assert response.status_code == 200, response.text
    assert response.headers["x-sandbox-provenance"] == "simulated"
    return response.json()


def _children(pid: int) -> set[int]:
    return {int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}


def test_two_workers_serve_and_one_distinct_miss_makes_one_policy_call(tmp_path: Path) -> None:
    """Sixteen distinct misses on sixteen connections are answered by both processes (the
    server and its one worker); eight identical misses sent at once are answered by one policy
    call, every caller getting its stored answer; the overlay holds one entry per miss."""
    suite = tmp_path / "mini"
    shutil.copytree(MINI, suite, ignore=shutil.ignore_patterns(".cache"))
    overlay, log = tmp_path / "overlay.sqlite", tmp_path / "policy.log"
    flags = ["--miss-policy", COUNTING_POLICY, "--miss-option", "delay=0.3"]
    flags += ["--overlay", str(overlay), "--log-level", "warning", "--workers", "2"]
    proc, port = start_server(suite, log, *flags)
    try:
        children = _children(proc.pid)

        async def calls() -> tuple[list[dict], list[dict]]:
            distinct = await asyncio.gather(*(_call(port, f"D-{n}") for n in range(16)))
            same = await asyncio.gather(*(_call(port, "SAME") for _ in range(8)))
            return distinct, same

        distinct, same = asyncio.run(calls())
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    answered_by = {a["body"]["answered_by"] for a in distinct}
    assert len(answered_by) == 2 and proc.pid in answered_by, answered_by  # both served
    (worker,) = answered_by - {proc.pid}
    assert worker in children
    asked = log.read_text().splitlines()
    assert len(asked) == 17, asked  # each distinct miss once, the repeated one once
    assert all(a == same[0] for a in same)
    assert len(OverlayStore(overlay)) == 17
    assert not Path(f"/proc/{worker}").exists()  # stopped with the server


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--workers", "0"], "--workers must be at least 1"),
        (["--workers", "2", "--mcp"], "--mcp serves from one process"),
        (["--workers", "2", "--record-to", "x.jsonl"], "--record-to serves from one process"),
    ],
)
def test_workers_with_options_of_one_process_are_refused(flags: list[str], message: str) -> None:
    """No server starts: exit 2 and one line saying which option wants one process."""
    done = subprocess.run(
        [sys.executable, "-m", "mock_tools", "serve", str(MINI), *flags],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert message in done.stderr and len(done.stderr.strip().splitlines()) == 1, done.stderr
