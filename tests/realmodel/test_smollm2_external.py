"""Every example agent of ``examples/agents/`` on SmolLM2-135M-Instruct through llama.cpp's server.

What it protects (issue 38, item 11): an external agent talks to the real model through the
sandbox's proxy as a user runs it (``sandbox run --agent external -O command=...``). Each
example echoes the model's reply into its history: ``fetch_loop.mjs`` with ``content: null``
beside the calls, ``openai_loop.py`` and ``mcp_loop.py`` without ``content``; llama-cpp-python's
server answered every such request with HTTP 500, so every episode spent its retries and ended
an infrastructure error. Now every request reaches the model and is answered: no exchange
failed, the requests after a tool-calling turn were answered, and every episode ends with a
status of the agent's (never an infrastructure error). The three runs share one server. The
Node example is skipped, saying why, where ``node`` is not installed.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.realmodel.own_server import clean_env, own_server

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "agents"
COMMANDS = {
    "openai_loop": f"{sys.executable} {EXAMPLES / 'openai_loop.py'}",
    "mcp_loop": f"{sys.executable} {EXAMPLES / 'mcp_loop.py'}",
    "fetch_loop": f"node {EXAMPLES / 'fetch_loop.mjs'}",
}
TASK = "g1_convert_eur_jpy"
CALLS = 2
"""The second request is the first to echo a tool-calling turn."""


@pytest.fixture(scope="module")
def pointed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    log = tmp_path_factory.mktemp("server") / "llama.log"
    env = clean_env(PYTHONPATH=str(ROOT), NO_COLOR="1")
    with own_server("smollm2-135m", log, env) as where:
        yield env | where


@pytest.mark.parametrize("example", sorted(COMMANDS))
def test_an_example_agent_runs_on_the_real_model_without_a_failed_request(
    example: str, pointed: dict[str, str], tmp_path: Path
) -> None:
    if example == "fetch_loop" and shutil.which("node") is None:
        pytest.skip("node is not installed: the JavaScript example needs Node 18+ (fetch)")
    args = ["run", "--agent", "external", "-O", f"command={COMMANDS[example]}"]
    args += ["--model", "smollm2-135m", "--tasks", TASK, "--max-model-calls", str(CALLS)]
    args += ["--out", str(tmp_path), "--no-plots", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.cli", *args],
        cwd=ROOT,
        env=pointed,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    run = Path(json.loads(done.stdout.splitlines()[-1])["run"])
    (traj,) = [json.loads(line) for line in (run / "trajectories.jsonl").read_text().splitlines()]
    failed = [x for x in traj["exchanges"] if "response" not in x]
    assert failed == [], failed
    assert traj["status"] in ("answered", "gave_up", "budget_exhausted"), traj["errors"]
    assert not [e for e in traj["errors"] if e["kind"] == "infra"]
    assert traj["usage"]["model_retries"] == 0
    # the requests after a turn that called a function, which the server answered 500 before
    after_calls = [
        x
        for x in traj["exchanges"]
        if any(m.get("tool_calls") for m in x["request"]["messages"] if isinstance(m, dict))
    ]
    called = any(
        (x["response"]["choices"][0]["message"].get("tool_calls") or [])
        for x in traj["exchanges"][:-1]
    )
    assert after_calls or not called
    print(
        f"{example}: {traj['status']} / {traj['end_reason']}, {len(traj['exchanges'])} requests, "
        f"{len(after_calls)} after a tool-calling turn, "
        f"prompt tokens {[n['usage']['prompt_tokens'] for n in traj['nodes'] if n.get('usage')]}"
    )
