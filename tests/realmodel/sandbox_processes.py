"""How the real-model tests run the sandbox: as a subprocess, marked so that every llama.cpp
server it launches can be found (and shown gone) afterwards."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.process_checks import alive

ROOT = Path(__file__).resolve().parents[2]
MARK = "SANDBOX_REALMODEL_TEST"
"""An environment variable every process a test run starts inherits: how to find its servers."""


def sandbox(
    args: list[str], env: dict[str, str], timeout: float = 1200
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "sandbox.cli", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_env(mark: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    return env | {MARK: mark, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}


def servers_of(mark: str) -> list[int]:
    """The llama.cpp servers alive now that a process of this test run started."""
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:
            continue
        server = b"llama_cpp.server" in cmdline or b"sandbox.models.llamacpp_server" in cmdline
        ours = server and f"{MARK}={mark}".encode() in environ
        if ours and alive(int(proc.name)):
            found.append(int(proc.name))
    return found
