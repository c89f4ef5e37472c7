"""``sandbox serve SUITE --miss-policy simulate --simulator MODEL``: a server any client can call,
whose misses a model plays (resolved by ``sandbox.models``, as ``--model`` is), kept in the
suite's overlay and never in the suite's own files."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from mock_tools import PROVENANCE_HEADER, load_suite
from mock_tools.overlay import OVERLAY_FILE, OverlayStore
from tests.agents.models.openai_server import ScriptedOpenAIServer, text_reply

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _simulator(body: dict[str, Any]) -> Any:
    arguments = body["messages"][-1]["content"].rsplit("New call, arguments:\n", 1)[-1]
    return text_reply(json.dumps({"error": "", "response": {"echo": json.loads(arguments)}}))


def _serve(suite: Path, port: int, *extra: str) -> subprocess.Popen[bytes]:
    cmd = [sys.executable, "-m", "sandbox", "serve", str(suite), "--port", str(port)]
    proc = subprocess.Popen([*cmd, "--log-level", "warning", *extra], cwd=ROOT)
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=1)
            return proc
        except httpx.HTTPError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail("sandbox serve did not start")
            time.sleep(0.1)


def test_serve_simulates_misses_with_a_model_and_keeps_them_in_the_overlay(tmp_path: Path) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(ROOT / "scenarios" / "default", suite)
    before = load_suite(suite).fingerprint
    call = {
        "category": "Weather",
        "tool_name": "weather",
        "api_name": "current_weather",
        "tool_input": {"city": "Atlantis"},
    }
    port = _free_port()
    with ScriptedOpenAIServer() as simulator:
        simulator.default = _simulator
        model = f"openai:sim-model@{simulator.base_url}"
        proc = _serve(suite, port, "--miss-policy", "simulate", "--simulator", model)
        try:
            with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30) as c:
                first = c.post("/virtual", json=call)
                again = c.post("/virtual", json=call)
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    assert first.status_code == 200 and first.headers[PROVENANCE_HEADER] == "simulated"
    echoed = {"city": "Atlantis", "units": "metric"}  # the schema default filled in
    assert first.json() == {"error": "", "response": {"echo": echoed}}
    assert again.json() == first.json()
    assert len(simulator.requests) == 1  # the second call is served from the overlay
    assert load_suite(suite).fingerprint == before
    (kept,) = list(OverlayStore(suite / OVERLAY_FILE).recordings())
    assert kept.provenance.source == "simulated"
    assert kept.provenance.model == model  # the simulator's name as given


def test_serve_refuses_simulate_without_a_simulator(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", "serve", "scenarios/default"]
        + ["--miss-policy", "simulate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "error: --miss-policy simulate needs --simulator (schema-sim offline, or a model name)"
    )
