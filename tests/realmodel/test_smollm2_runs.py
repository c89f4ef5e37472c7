"""A real model end to end: SmolLM2-135M-Instruct on llama.cpp's server, which each run launches
on a free port and stops, driven by ReAct through native tool calls and by DFSDT through the
Thought/Action text adapter, on three tasks with six model calls each.

What a real model and a real server give that the project's fakes never did: every episode ends
with a valid status (never an internal or infrastructure error); the trajectories hold the
usage the server counted; the run replays offline, with no server, exactly; a second run from the
model cache sends nothing to any server; ``sandbox eval`` scores it and ``sandbox view`` shows it;
and no server outlives its run.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from sandbox.models import resolve_model
from tests.realmodel.sandbox_processes import run_env, sandbox, servers_of

pytestmark = pytest.mark.realmodel

ROOT = Path(__file__).resolve().parents[2]
TASKS = "g1_flight_baggage,g1_call_time_tokyo,g1_convert_eur_jpy"
RUNS = {"react": "smollm2-135m", "dfsdt": "smollm2-135m-text"}
CLOCK_FIELDS = ("started_at", "ended_at", "wall_seconds", "run_id")
"""What a replay measures again or names anew; everything else must be the recorded bytes."""


@dataclass
class RealRun:
    agent: str
    alias: str
    path: Path
    summary: dict[str, Any]
    cache: Path
    seconds: float

    def trajectories(self) -> list[dict[str, Any]]:
        text = (self.path / "trajectories.jsonl").read_text(encoding="utf-8")
        return [json.loads(line) for line in text.splitlines()]


@pytest.fixture(scope="module")
def mark() -> str:
    return uuid.uuid4().hex


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory, mark: str) -> dict[str, RealRun]:
    """The two runs, made once for the module; each launches and stops its own server."""
    out = tmp_path_factory.mktemp("realmodel")
    made = {}
    for agent, alias in RUNS.items():
        cache = out / f"{agent}.sqlite"
        args = ["run", "--model", alias, "--agent", agent, "--tasks", TASKS]
        args += ["--max-model-calls", "6", "--concurrency", "1", "--model-cache", str(cache)]
        started = time.monotonic()
        done = sandbox([*args, "--out", str(out / "runs"), "--no-plots", "--json"], run_env(mark))
        seconds = time.monotonic() - started
        assert done.returncode == 0, done.stderr[-3000:]
        summary = json.loads(done.stdout.splitlines()[-1])
        made[agent] = RealRun(agent, alias, Path(summary["run"]), summary, cache, seconds)
    return made


@pytest.mark.parametrize("agent", list(RUNS))
def test_every_episode_ends_with_a_valid_status(runs: dict[str, RealRun], agent: str) -> None:
    run = runs[agent]
    trajectories = run.trajectories()
    assert len(trajectories) == 3 == run.summary["episodes"]
    for t in trajectories:
        assert t["status"] in ("answered", "gave_up", "budget_exhausted"), t["end_reason"]
        assert not t["end_reason"].startswith(("internal_error", "model_error"))
        assert all(e["kind"] != "internal" for e in t["errors"]), t["errors"]
        assert t["usage"]["model_calls"] <= 6


@pytest.mark.parametrize("agent", list(RUNS))
def test_trajectories_hold_the_usage_the_server_counted(
    runs: dict[str, RealRun], agent: str
) -> None:
    for t in runs[agent].trajectories():
        model_nodes = [n for n in t["nodes"] if n["kind"] != "error"]
        assert model_nodes
        for node in model_nodes:
            assert node["usage"]["prompt_tokens"] > 0 and node["usage"]["completion_tokens"] > 0
            assert node["latency_ms"] > 0
        assert t["usage"]["prompt_tokens"] == sum(n["usage"]["prompt_tokens"] for n in model_nodes)
        assert t["model"]["params"]["max_tokens"] == 192  # the alias's bound on a generation


def test_no_server_outlives_its_run(runs: dict[str, RealRun], mark: str) -> None:
    assert runs and servers_of(mark) == []


@pytest.mark.parametrize("agent", list(RUNS))
def test_replay_reproduces_the_run_offline_exactly(
    runs: dict[str, RealRun], agent: str, mark: str, tmp_path: Path
) -> None:
    run = runs[agent]
    done = sandbox(["replay", str(run.path), "--out", str(tmp_path)], run_env(mark))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "REPRODUCED: 3/3 episodes identical" in " ".join(done.stdout.split())
    replayed = [
        json.loads(line)
        for line in next(tmp_path.glob("*/trajectories.jsonl")).read_text().splitlines()
    ]
    assert [_recorded_bytes(t) for t in replayed] == [
        _recorded_bytes(t) for t in run.trajectories()
    ]


def _recorded_bytes(traj: dict[str, Any]) -> str:
    """The trajectory as JSON without what a clock measured, its run id and the model that
    played it (the live model, then the replay model)."""
    traj = json.loads(json.dumps(traj))
    traj.pop("model")
    for field in CLOCK_FIELDS:
        traj.pop(field, None)
        traj["usage"].pop(field, None)
    for node in traj["nodes"]:
        for call in node.get("calls", []):
            if call.get("observation"):
                call["observation"].pop("latency_ms", None)
    return json.dumps(traj, sort_keys=True)


@pytest.mark.parametrize("agent", list(RUNS))
def test_a_second_run_from_the_model_cache_sends_nothing(
    runs: dict[str, RealRun], agent: str, mark: str, tmp_path: Path
) -> None:
    """The alias is redefined with a server that cannot start: any request the cache could not
    answer would fail the run."""
    run = runs[agent]
    models = tmp_path / "models.yaml"
    entry = {
        "kind": "openai",
        "model": "SmolLM2-135M-Instruct",
        "base_url": "http://127.0.0.1:9/v1",
        "tool_calls": "native" if agent == "react" else "text",
        "retry": {"retry_timeouts": False},
        "params": resolve_model(run.alias).params,
        "launch": {"server": "llamacpp", "gguf": str(tmp_path / "absent.gguf")},
    }
    models.write_text(json.dumps({"models": {run.alias: entry}}))
    env = run_env(mark) | {"SANDBOX_MODELS_FILE": str(models)}
    args = ["run", "--model", run.alias, "--agent", agent, "--tasks", TASKS, "--json"]
    args += ["--max-model-calls", "6", "--concurrency", "1", "--model-cache", str(run.cache)]
    done = sandbox([*args, "--out", str(tmp_path / "runs"), "--no-plots"], env)
    assert done.returncode == 0, done.stderr[-2000:]
    again = json.loads(done.stdout.splitlines()[-1])
    assert again["by_status"] == run.summary["by_status"]
    assert again["tokens"] == run.summary["tokens"]
    assert again["model_calls"] == run.summary["model_calls"]


def test_eval_scores_the_run(runs: dict[str, RealRun], mark: str) -> None:
    run = runs["dfsdt"]
    done = sandbox(["eval", str(run.path), "--no-plots"], run_env(mark))
    assert done.returncode == 0, done.stderr[-2000:]
    scores = json.loads((run.path / "scores.json").read_text())
    assert len(scores["labels"]) == 3
    assert {lb["label"] for lb in scores["labels"]} <= {"solved", "unsolved", "unsure"}


def test_view_shows_the_run(runs: dict[str, RealRun], mark: str) -> None:
    from tests.agents.models.openai_server import free_port

    run = runs["react"]
    port = free_port()
    view = subprocess.Popen(
        [sys.executable, "-m", "sandbox.cli", "view", str(run.path.parent), "--port", str(port)],
        cwd=ROOT,
        env=run_env(mark),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        page = _get(f"http://127.0.0.1:{port}/runs/{run.path.name}", view)
        assert run.path.name in page and "smollm2-135m" in page
        data = json.loads(_get(f"http://127.0.0.1:{port}/api/runs/{run.path.name}/episodes", view))
        assert len(data) == 3 if isinstance(data, list) else data
    finally:
        view.terminate()
        view.wait(timeout=10)


def _get(url: str, server: subprocess.Popen) -> str:
    deadline = time.monotonic() + 30
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:  # noqa: S310 (loopback)
                return r.read().decode()
        except OSError:
            assert server.poll() is None, server.stderr.read() if server.stderr else ""
            assert time.monotonic() < deadline, f"nothing answered {url}"
            time.sleep(0.2)
