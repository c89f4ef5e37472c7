"""Crash safety: SIGKILL a run mid-way, resume it, every episode appears exactly once."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness_suite import suite_path

from sandbox.run import resume_run
from tests.agents.models.openai_server import ScriptedOpenAIServer, finish_reply, slow

ROOT = Path(__file__).resolve().parents[2]


def _lines(file: Path) -> list[str]:
    if not file.exists():
        return []
    return [x for x in file.read_text().split("\n")[:-1] if x]


def test_sigkill_then_resume_keeps_every_episode_once(tmp_path: Path) -> None:
    suite = suite_path(tmp_path)
    with ScriptedOpenAIServer() as server:
        server.default = lambda body: slow(finish_reply("It is done."), 0.15)
        cmd = [
            sys.executable,
            "-m",
            "sandbox",
            "run",
            "--suite",
            str(suite),
            "--agent",
            "react",
            "--model",
            f"openai:scripted@{server.base_url}",
            "--trials",
            "3",
            "--concurrency",
            "1",
            "--out",
            str(tmp_path / "runs"),
            "--run-id",
            "crash",
        ]
        paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        proc = subprocess.Popen(
            cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        file = tmp_path / "runs" / "crash" / "trajectories.jsonl"
        deadline = time.monotonic() + 60
        while len(_lines(file)) < 2:
            assert proc.poll() is None, proc.communicate()[1].decode()
            assert time.monotonic() < deadline, "the run never wrote two episodes"
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        before = _lines(file)
        manifest = json.loads((file.parent / "manifest.json").read_text())
        total = len(manifest["episodes"])
        assert manifest["status"] == "running"  # killed: never marked finished
        assert 2 <= len(before) < total
        server.default = lambda body: finish_reply("It is done.")
        result = resume_run(file.parent, show_progress=False)
    after = _lines(file)
    keys = [(json.loads(x)["scenario_id"], json.loads(x)["trial"]) for x in after]
    assert len(keys) == len(set(keys)) == total
    assert sorted(keys) == sorted(tuple(k) for k in manifest["episodes"])
    for line in before:  # nothing finished before the kill was lost or rewritten
        assert line in after
    assert result.ran == total - len(before) and result.status == "completed"
