"""``sandbox COMMAND | head``: when stdout's reader goes away every command stops quietly with 141
(128 + SIGPIPE), as docs/cli.md says, and nothing on stderr about the pipe (hardening round two,
item 15)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.agents.models.openai_server import ScriptedOpenAIServer
from tests.hostile.conftest import MINI, ROOT
from tests.hostile.test_run_records import make_run

COMMANDS = {
    "run": ["run", "--suite", str(MINI), "--model", "reference", "--out", "{tmp}", "--no-plots"],
    "eval": ["eval", "{run}", "--no-plots"],
    "eval --json": ["eval", "{run}", "--no-plots", "--json"],
    "rescore": ["rescore", "{run}", "--no-plots"],
    "replay": ["replay", "{run}"],
    "leaderboard": ["leaderboard", "{run}"],
    "compare --runs": ["compare", "--runs", "{run}", "{tmp}/copy", "--out", "{tmp}", "--no-plots"],
    "probe": ["probe", "--suite", str(MINI), "--model", "reference"],
    "suite stats": ["suite", "stats", str(MINI)],
    "export toolbench": ["export", "toolbench", "{run}", "{tmp}/answers"],
    "run --print-config": ["run", "--print-config"],
}


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("recorded"))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_36_a_closed_stdout_ends_every_command_with_141_quietly(
    name: str, recorded: Path, tmp_path: Path
) -> None:
    """On main `run` and `eval` exited 1 (rich's own exit on a broken pipe)."""
    argv = [a.format(run=recorded, tmp=tmp_path) for a in COMMANDS[name]]
    shutil.copytree(recorded, tmp_path / "copy")
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first line (`| head -0`)
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", *argv],
        cwd=ROOT,
        env=env,
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        timeout=120,
    )
    os.close(write_end)
    assert done.returncode == 141, done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    assert "Exception ignored" not in done.stderr


def test_a_pipe_that_breaks_while_episodes_run_stops_the_run_interrupted(
    slow_model: ScriptedOpenAIServer, tmp_path: Path
) -> None:
    """`sandbox run ... 2>&1 | head -2` (issue 40 item 9): the progress line that met the
    closed pipe stopped nothing and hid the run's end (its callback raised in the loop, the run
    waited for ever, the manifest stayed ``running``). Now the run stops at that line with 141,
    its manifest ``interrupted``, every finished episode kept, and ``--resume`` goes on."""
    argv = ["run", "--suite", str(MINI), "--model", f"openai:scripted-model@{slow_model.base_url}"]
    argv += ["--out", str(tmp_path), "--run-id", "piped", "--no-plots", "--trials", "2"]
    argv += ["--concurrency", "1"]
    read_end, write_end = os.pipe()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sandbox", *argv],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=write_end,
    )
    os.close(write_end)
    seen = b""
    while seen.count(b"\n") < 2:  # the run's title and its first episode, then `head` leaves
        chunk = os.read(read_end, 4096)
        assert chunk, "the run ended before two lines"
        seen += chunk
    os.close(read_end)
    try:
        code = proc.wait(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert code == 141
    manifest = json.loads((tmp_path / "piped" / "manifest.json").read_text())
    assert manifest["status"] == "interrupted" and "closed pipe" in manifest["error"]
    stored = (tmp_path / "piped" / "trajectories.jsonl").read_text().splitlines()
    assert 1 <= len(stored) < 8
    resumed = subprocess.run(
        [sys.executable, "-m", "sandbox", "run", "--resume", str(tmp_path / "piped"), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["episodes"] == 8
