"""Subprocesses of the benchmarks: the project's root, the ``sandbox`` command, a timed command,
and a child Python script that prints its figures as its last line of JSON."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_SUITE = ROOT / "scenarios" / "default"


def sandbox_command() -> list[str]:
    """The installed ``sandbox`` script beside this interpreter, else ``python -m sandbox.cli``."""
    script = Path(sys.executable).with_name("sandbox")
    return [str(script)] if script.exists() else [sys.executable, "-m", "sandbox.cli"]


def wall(argv: list[str]) -> float:
    """Seconds ``argv`` takes, run from the project's root (its output discarded)."""
    started = time.perf_counter()
    subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
    return time.perf_counter() - started


def child_json(code: str, *args: object) -> Any:
    """Run ``code`` in a fresh interpreter (from the root) and read its last line as JSON."""
    done = subprocess.run(
        [sys.executable, "-c", code, *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"benchmark child failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])
