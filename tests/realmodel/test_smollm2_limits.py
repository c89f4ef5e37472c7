"""What the real server does at the limits, and what the project makes of it: a request the
client gave up on is not retried onto the busy slot; a prompt longer than the context is its own
error kind; the per-episode wall clock bounds an episode against the real server; the server is
gone when its client closes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agents.errors import ModelError
from sandbox.models import resolve_model
from sandbox.models.managed import ManagedModel
from sandbox.models.remote import openai_client
from tests.process_checks import alive

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
ASK = [{"role": "user", "content": "Write a long story about a lighthouse keeper."}]


def launched(**update: object) -> ManagedModel:
    """The alias's client, launching its own server (the alias's base URL is not asked)."""
    spec = resolve_model("smollm2-135m", env={}).model_copy(update={"base_url": None, **update})
    model = openai_client(spec)
    assert isinstance(model, ManagedModel)
    return model


async def test_a_timed_out_generation_is_not_retried_onto_the_busy_slot() -> None:
    model = launched(timeout=0.5)
    try:
        await model.probe()
        with pytest.raises(ModelError) as info:
            await model.complete(ASK, [], {"max_tokens": 256})
        assert info.value.kind == "timeout" and info.value.attempts == 1
    finally:
        await model.aclose()
    assert model.server is None


async def test_a_prompt_longer_than_the_context_is_a_context_length_error() -> None:
    model = launched()
    try:
        words = " ".join(["the weather in Berlin"] * 2000)
        with pytest.raises(ModelError) as info:
            await model.complete([{"role": "user", "content": words}], [])
        assert info.value.kind == "context_length" and info.value.attempts == 1
        pid = model.server.pid if model.server else None
    finally:
        await model.aclose()
    assert pid is not None and not alive(pid)


def test_the_wall_clock_budget_ends_an_episode_against_the_real_server(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SANDBOX_")}
    args = ["run", "--model", "smollm2-135m", "--agent", "react", "--tasks", "g2_cafe_walk"]
    args += ["--max-seconds", "2", "--out", str(tmp_path), "--no-plots", "--json"]
    done = subprocess.run(
        [sys.executable, "-m", "sandbox.cli", *args],
        cwd=ROOT,
        env=env | {"PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    run = Path(json.loads(done.stdout.splitlines()[-1])["run"])
    traj = json.loads((run / "trajectories.jsonl").read_text().splitlines()[0])
    assert traj["status"] == "budget_exhausted" and traj["end_reason"] == "budget:max_seconds"
    assert traj["usage"]["wall_seconds"] < 10
