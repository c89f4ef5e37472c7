"""An external agent on a remote model, through the proxy and the model layer, and its replay
without that model.

What it protects: the proxy forwards the agent's own requests (its prompt, its tools) to the
run's model through the same layer as the built-in loops: a 429 is retried there (the agent
sees one answer), the usage and the alias's price make the cost, and ``--model-cache`` answers
a re-run without the endpoint. With the endpoint gone, ``sandbox replay`` re-runs the agent's
command on the recorded answers and reproduces every episode.
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

from sandbox.replay import compare_trajectories, replay_run
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from tests.agents.models.openai_server import (
    ScriptedOpenAIServer,
    error_reply,
    finish_reply,
    tool_call_reply,
)

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
KETTLE = "mini_g1_kettle_price"
ANSWER = "The cheapest kettle is the Steel Kettle (K-1) at 29.90 EUR."
OPENAI_LOOP = f"{sys.executable} {ROOT / 'examples' / 'agents' / 'openai_loop.py'}"


def _run(tmp_path: Path, server: ScriptedOpenAIServer, name: str, **settings: object) -> str:
    models = tmp_path / "models.yaml"
    alias = {
        "kind": "openai",
        "model": "scripted-model",
        "base_url": server.base_url,
        "price": {"input": 1.0, "output": 2.0},
    }
    models.write_text(yaml.safe_dump({"models": {"scripted": alias}}))
    config = RunConfig(
        suite=str(MINI),
        agent="external",
        agent_options={"command": OPENAI_LOOP, "grace": 0.5},
        model="scripted",
        tasks=[KETTLE],
        out=str(tmp_path / name),
        **settings,
    )
    env = {"SANDBOX_MODELS_FILE": str(models)}
    return run_suite(config, env=env, show_progress=False).path


def test_a_remote_model_answers_through_the_model_layer_and_the_run_replays_without_it(
    tmp_path: Path,
) -> None:
    cache = str(tmp_path / "cache.sqlite")
    with ScriptedOpenAIServer() as server:
        server.push(
            error_reply(429, retry_after=0.05),
            tool_call_reply("search_products_for_shop", {"query": "kettle"}, content="Searching."),
            finish_reply(ANSWER),
        )
        run = _run(tmp_path, server, "first", model_cache=cache)
        asked = list(server.requests)
        again = _run(tmp_path, server, "cached", model_cache=cache)
        assert len(server.requests) == len(asked) == 3  # the re-run asked nothing
    (traj,) = read_trajectories(run)
    assert (traj.status.value, traj.final_answer) == ("answered", ANSWER)
    assert traj.usage.model_calls == 2 and traj.usage.model_retries == 1
    assert abs(traj.usage.cost - (2 * 10 * 1.0 + 2 * 5 * 2.0) / 1e6) < 1e-12
    first = asked[1]
    assert first["model"] == "scripted-model"
    assert first["messages"][0]["content"].startswith("You solve the user's task")
    assert [t["function"]["name"] for t in first["tools"]][-1] == "Finish"
    assert [n.kind for n in traj.nodes] == ["action", "finish"]
    assert traj.nodes[0].calls[0].observation.ok
    (cached,) = read_trajectories(again)
    assert compare_trajectories(traj, cached).ok
    assert cached.exchanges[0]["request"] == traj.exchanges[0]["request"]
    report = replay_run(run)  # the endpoint is gone
    assert report.ok and report.episodes == 1, [v.first_diff for v in report.verdicts]


def test_a_model_failure_that_survives_the_retries_is_an_infrastructure_error(
    tmp_path: Path,
) -> None:
    """Recorded as a failed turn and an infrastructure error (left out of the pass rate,
    re-run by --resume), never the agent's mistake, whatever the agent does with its 502."""
    with ScriptedOpenAIServer() as server:
        server.push(
            tool_call_reply("search_products_for_shop", {"query": "kettle"}),
            *[error_reply(429, retry_after=0.01) for _ in range(5)],
        )
        run = _run(tmp_path, server, "down")
    (traj,) = read_trajectories(run)
    assert (traj.status.value, traj.end_reason) == ("error", "model_error:rate_limit")
    assert traj.infra_error and [n.kind for n in traj.nodes] == ["action", "error"]
    assert traj.exchanges[1]["kind"] == "rate_limit" and "response" not in traj.exchanges[1]
    assert traj.usage.model_retries == 4
