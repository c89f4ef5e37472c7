"""``sandbox COMMAND | head``: when stdout's reader goes away every command stops quietly with 141
(128 + SIGPIPE), as docs/cli.md says, and nothing on stderr about the pipe (hardening round two,
item 15)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

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
