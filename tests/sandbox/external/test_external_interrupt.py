"""A run of an external agent stopped by Ctrl-C or SIGTERM leaves no agent process behind.

What it protects: the agent runs in a process group of its own (so the terminal's Ctrl-C does
not reach it directly); when the run is interrupted, the episode's cleanup stops that whole
group, the agent's own children included, and the run ends ``interrupted`` (resumable); an
interruption while the agent's process is being set up kills it too.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from sandbox.external.process import Limits, run_command
from tests.sandbox.external.processes import gone

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "ctrl-c"])
def test_an_interrupted_run_leaves_no_agent_process_behind(tmp_path: Path, sig: int) -> None:
    pids = tmp_path / "pids"
    agent = f"sleep 300 & echo $! >> {pids}; echo $$ >> {pids}; wait"
    argv = [sys.executable, "-m", "sandbox", "run", "--suite", str(MINI), "--agent", "external"]
    argv += ["-O", f"command={agent}", "-O", "grace=0.5", "--model", "reference"]
    argv += ["--tasks", "mini_g1_track", "--out", str(tmp_path / "runs"), "--no-plots"]
    run = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while not (pids.exists() and len(pids.read_text().split()) == 2):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the agent did not start"
            time.sleep(0.05)
        run.send_signal(sig)
        try:
            _, err = run.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            alive = [p for p in pids.read_text().split() if not gone(int(p))]
            pytest.fail(f"the run did not end within 60 s of the signal; agent alive: {alive}")
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode != 0, err
    deadline = time.monotonic() + 10
    while not all(gone(int(p)) for p in pids.read_text().split()):
        assert time.monotonic() < deadline, f"agent processes left: {pids.read_text()}"
        time.sleep(0.05)
    (manifest,) = (tmp_path / "runs").glob("*/manifest.json")
    assert json.loads(manifest.read_text())["status"] == "interrupted"


def _alive_with(marker: str) -> list[int]:
    """Processes whose command line holds ``marker`` that have not ended."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and not gone(int(proc.name)):
            found.append(int(proc.name))
    return found


async def test_a_run_stopped_while_its_agent_starts_kills_the_agent() -> None:
    """A cancellation between the start of the process and its pipes being read still stops
    its group."""
    marker = f"agent-sandbox-test-{uuid.uuid4().hex}"
    command = f"exec {sys.executable} -c 'import time; time.sleep(300)' {marker}"
    limits = Limits(time.monotonic() + 60, "timeout", asyncio.Event(), 0.5, 100)
    task = asyncio.ensure_future(run_command(command, limits, stdin=b"{}\n", env={}, cwd=None))
    await asyncio.sleep(0)  # started; the episode awaits its pipes
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    deadline = time.monotonic() + 10
    while _alive_with(marker):
        assert time.monotonic() < deadline, f"agent left running: {_alive_with(marker)}"
        await asyncio.sleep(0.05)
