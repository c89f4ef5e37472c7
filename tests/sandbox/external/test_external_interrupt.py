"""A run of an external agent stopped by Ctrl-C or SIGTERM leaves no agent process behind.

What it protects: the agent runs in a process group of its own (so the terminal's Ctrl-C does
not reach it directly); when the run is interrupted, the episode's cleanup stops that whole
group, the agent's own children included, and the run ends ``interrupted`` (resumable).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

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
        _, err = run.communicate(timeout=60)
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
