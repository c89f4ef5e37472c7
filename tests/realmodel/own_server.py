"""One llama.cpp server for a test module's runs: started as the launcher starts it, stopped
after the module.

The runs find it answering at the alias's base URL (``SANDBOX_<ALIAS>_BASE_URL``) and start no
server of their own, so a module pays for one start (tens of seconds on a loaded machine), and
its runs reach a server that already answered other requests: what a repeatable run must not
depend on. Not a test module (no ``test_`` prefix).
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from sandbox.models import resolve_model
from sandbox.models.launch import server_command
from sandbox.models.server_process import free_port
from sandbox.models.specs import base_url_env_var

START_SECONDS = 300


@contextlib.contextmanager
def own_server(alias: str, log: Path, env: dict[str, str]) -> Iterator[dict[str, str]]:
    """Serve ``alias`` on a free port for the block; yields the variables that point runs at
    it."""
    spec = resolve_model(alias, env={})
    assert spec.launch is not None and spec.model
    port = free_port()
    argv = server_command(spec.launch, spec.model, "127.0.0.1", port)
    with log.open("wb") as out:
        server = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + START_SECONDS
        while True:
            assert server.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, (
                f"the server did not answer within {START_SECONDS} s"
            )
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=5):  # noqa: S310 (loopback)
                    break
            except OSError:
                time.sleep(0.5)
        yield {base_url_env_var(alias): url}
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()


def clean_env(**more: str) -> dict[str, str]:
    """This process's environment without any ``SANDBOX_`` setting, plus ``more``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    return env | more
