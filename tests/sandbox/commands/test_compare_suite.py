"""``sandbox compare --agents`` resolves its suite before the first episode, as ``run`` does:
outside the checkout the default suite is the packaged one, and a suite that does not load stops
the command before any agent runs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from sandbox.cli import main


def test_compare_outside_the_checkout_compares_the_default_suite(tmp_path: Path) -> None:
    """From a folder without scenarios/, with the installed package only: both agents run and
    the comparison is made (it exited 2, "no such suite folder", after running them)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    proc = subprocess.run(
        [sys.executable, "-m", "sandbox", "compare", "--agents", "react,react@2"]
        + ["--model", "reference", "--tasks", "g1_*", "--no-plots", "--json", "--out", "runs"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    line = json.loads(proc.stdout.splitlines()[-1])
    assert line["pass_rate"] == {"react": 1.0, "react@2": 1.0}


def test_a_suite_that_does_not_load_stops_compare_before_any_episode(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["compare", "--agents", "react,react@2", "--model", "reference"]
    argv += ["--suite", str(tmp_path / "nowhere"), "--out", str(tmp_path / "runs")]
    assert main(argv) == 2
    assert "cannot load suite" in capsys.readouterr().err
    assert not (tmp_path / "runs").exists()
