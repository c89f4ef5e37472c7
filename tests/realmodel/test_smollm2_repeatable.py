"""Repeatable runs of SmolLM2-135M-Instruct on llama.cpp's server.

What it protects (issue 38, item 12):

- the same run twice gives the same episode: every request carries a seed of its episode and
  the server's tool-calling format uses it (and the request's ``max_tokens``) in every
  completion it makes, so the second run, against a server that has answered the first run's
  requests since, samples the same replies (before, no seed was sent and llama.cpp's sampling
  went on from its previous request's);
- no completion outgrows the request's ``max_tokens`` (before, the format generated the calls'
  arguments until the context was full, then overflowed on its own output: "4,281 tokens" for
  a prompt of about 1,000);
- a context overflow is the model's outcome: the model cache keeps it, and a re-run from the
  cache, with no server at all, ends the episode as the first run did.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from sandbox.models import resolve_model
from tests.realmodel.own_server import clean_env, own_server

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
TASK = "g1_call_time_tokyo"
CALLS = 3
MAX_TOKENS = 192
CLOCKS = ("started_at", "ended_at", "wall_seconds", "run_id", "latency_ms", "id")
"""What a clock measured, a run named, or the server made up at random (a call's ``id``, a
uuid in llama.cpp's): the only fields two runs may differ in."""


def sandbox(args: list[str], env: dict[str, str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.cli", *args, "--no-plots", "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
    return summary


def trajectories(summary: dict[str, Any]) -> list[dict[str, Any]]:
    text = (Path(summary["run"]) / "trajectories.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def without_clocks(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: without_clocks(v) for k, v in value.items() if k not in CLOCKS}
    if isinstance(value, list):
        return [without_clocks(v) for v in value]
    return value


@pytest.fixture(scope="module")
def pointed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    log = tmp_path_factory.mktemp("server") / "llama.log"
    env = clean_env(PYTHONPATH=str(ROOT), NO_COLOR="1")
    with own_server("smollm2-135m", log, env) as where:
        yield env | where


def test_the_same_run_twice_gives_the_same_episode(pointed: dict[str, str], tmp_path: Path) -> None:
    args = ["run", "--model", "smollm2-135m", "--agent", "react", "--tasks", TASK]
    args += ["--max-model-calls", str(CALLS), "--out", str(tmp_path)]
    first = trajectories(sandbox(args, pointed))
    again = trajectories(sandbox(args, pointed))
    assert without_clocks(again) == without_clocks(first)
    nodes = [n for n in first[0]["nodes"] if n.get("usage")]
    assert len(nodes) >= 2
    for node in nodes:  # each completion held to the request's max_tokens
        calls = max(1, len(node.get("calls") or []))
        assert 0 < node["usage"]["completion_tokens"] <= MAX_TOKENS * calls, node["usage"]
        assert node["usage"]["prompt_tokens"] < 4096
    print("prompt, completion tokens:", [tuple(n["usage"].values())[:2] for n in nodes])


def test_a_context_overflow_is_cached_and_a_cached_re_run_reproduces_it(tmp_path: Path) -> None:
    """An alias of the same model whose server has a 512-token context: the ReAct prompt of the
    task (about 900 tokens) overflows at the first call."""
    small = resolve_model("smollm2-135m", env={})
    assert small.launch is not None
    alias = {
        "kind": "openai",
        "model": small.model,
        "base_url": "http://127.0.0.1:9/v1",
        "tool_calls": "native",
        "retry": {"retry_timeouts": False},
        "params": small.params,
        "launch": small.launch.model_copy(update={"context": 512}).model_dump(),
    }
    first_models = tmp_path / "first.json"
    first_models.write_text(json.dumps({"models": {"smollm2-small": alias}}))
    gone = alias | {"launch": {"server": "llamacpp", "gguf": str(tmp_path / "absent.gguf")}}
    gone_models = tmp_path / "gone.json"
    gone_models.write_text(json.dumps({"models": {"smollm2-small": gone}}))
    cache = str(tmp_path / "cache.sqlite")
    args = ["run", "--model", "smollm2-small", "--agent", "react", "--tasks", TASK]
    args += ["--model-cache", cache, "--out", str(tmp_path / "runs")]
    env = clean_env(PYTHONPATH=str(ROOT), NO_COLOR="1")
    first = sandbox(args, env | {"SANDBOX_MODELS_FILE": str(first_models)})
    # no server can start now: a request the cache could not answer would fail the run
    again = sandbox(args, env | {"SANDBOX_MODELS_FILE": str(gone_models)})
    (one,), (two,) = trajectories(first), trajectories(again)
    assert (one["status"], one["end_reason"]) == ("context_overflow", "context_overflow")
    assert "maximum context length is 512" in one["nodes"][-1]["error"]
    assert without_clocks(two["nodes"]) == without_clocks(one["nodes"])
    assert (two["status"], two["end_reason"]) == (one["status"], one["end_reason"])
    assert again["by_status"] == first["by_status"] == {"context_overflow": 1}
