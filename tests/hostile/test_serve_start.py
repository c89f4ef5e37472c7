"""``serve`` (``sandbox serve`` and ``python -m mock_tools serve``) refuses to start with a value
it cannot use, and a server that cannot listen says so in one line: exit 2, as docs/cli.md says
(hardening round two, items 7 and 9)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys

import pytest

from tests.hostile.conftest import MINI, ROOT
from tests.hostile.test_run_records import one_error_line

SERVES = {"sandbox": ["-m", "sandbox", "serve"], "mock_tools": ["-m", "mock_tools", "serve"]}


def serve(cli: str, *args: str) -> subprocess.CompletedProcess[str]:
    """One start of ``serve``; a server that starts instead of refusing times out (20 s)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, *SERVES[cli], str(MINI), *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=20,
    )


@pytest.mark.parametrize("cli", sorted(SERVES))
@pytest.mark.parametrize(
    ("flags", "said"),
    [
        (["--fault-kinds", "meteor"], "invalid fault settings: kinds.0"),
        (["--nearest-threshold", "5"], "--nearest-threshold is an option of another miss policy"),
        (["--upstream-url", "notaurl"], "--upstream-url is an option of another miss policy"),
        (["--miss-policy", "upstream", "--upstream-url", "notaurl"], "is not an http(s) URL"),
        (["--miss-policy", "nearest", "--simulator", "schema-sim"], "--simulator is an option"),
        (["--log-level", "loud"], "invalid choice: 'loud'"),
    ],
)
def test_28_serve_refuses_values_it_cannot_use_before_it_starts(cli, flags, said) -> None:
    """On main each started a server (the test timed out)."""
    done = serve(cli, *flags, "--port", "0")
    assert done.returncode == 2 and said in one_error_line(done.stderr), done.stderr
    assert "Uvicorn running" not in done.stderr and "Started server" not in done.stderr


@pytest.mark.parametrize("cli", sorted(SERVES))
def test_30_a_port_in_use_or_a_host_that_is_none_is_one_line_exit_2(cli: str) -> None:
    """On main uvicorn logged the failure and the command exited 3."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        done = serve(cli, "--port", port)
    assert done.returncode == 2, done.stderr
    assert f"cannot listen on 127.0.0.1:{port}" in one_error_line(done.stderr)
    assert "INFO" not in done.stderr and "ERROR" not in done.stderr
    done = serve(cli, "--host", "999.1.1.1", "--port", "0")
    assert done.returncode == 2 and "--host 999.1.1.1" in one_error_line(done.stderr)
