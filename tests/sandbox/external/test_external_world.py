"""External agents on a world suite act on their episode's own world session.

What it protects: whichever door an external agent's tools go through (``POST /call``, MCP with
the SDK client, the suite's native route, StableToolBench's ``/virtual``), its writes land in
the episode's session (the one the sandbox opened at the task's initial state with the run's
seed), each call's observation carries the state hash, the episode is judged on its final
state, and ``sandbox replay`` reproduces it; a REST call made before any other opens that
session first; ``/virtual``'s state comes in its ``X-Sandbox-State`` header; the session routes
(``/sessions...``, ``/reset``) are refused, so an agent can neither rewind its own world nor
reach another episode's.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.toolenv import FINISH_FUNCTION, env_dispatch
from agents.trajectory import Component
from mock_tools import load_suite
from sandbox.cli import main
from sandbox.external.gateway import EpisodeUrls, episode_server
from sandbox.external.record import EpisodeRecord
from sandbox.external.scope import EpisodeScope
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from sandbox.tool_envs import open_tool_envs
from sandbox.tool_envs.http import WorldToolEnv

ROOT = Path(__file__).resolve().parents[3]
TINYWORLD = ROOT / "tests" / "fixtures" / "suites" / "tinyworld"
EXAMPLES = ROOT / "examples" / "agents"
REST_AGENT = Path(__file__).with_name("rest_agent.py")
TASKS = "pay_bob,unfreeze_and_pay,balance"  # the tasks without a user (a conversation)
AGENTS = {
    "call": f"{sys.executable} {EXAMPLES / 'openai_loop.py'}",
    "mcp": f"{sys.executable} {EXAMPLES / 'mcp_loop.py'}",
    "native": f"{sys.executable} {REST_AGENT} native",
    "virtual": f"{sys.executable} {REST_AGENT} virtual",
}


@pytest.mark.parametrize("door", sorted(AGENTS))
def test_an_agents_writes_land_in_its_episodes_world_and_are_judged_there(
    door: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    runs = tmp_path / "runs"
    argv = ["run", "--suite", str(TINYWORLD), "--agent", "external", "-O"]
    argv += [f"command={AGENTS[door]}", "--model", "reference", "--seed", "3", "--tasks", TASKS]
    assert main([*argv, "--out", str(runs), "--run-id", door, "--no-plots", "--json"]) == 0
    line = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert line["pass_rate"] == 1.0 and line["by_status"] == {"answered": 3}
    trajectories = {t.scenario_id: t for t in read_trajectories(runs / door)}
    for task, traj in trajectories.items():
        calls = [c for n in traj.nodes for c in n.calls if c.observation is not None]
        states = [c.observation.state for c in calls if c.name != "Finish"]
        assert states and None not in states, (task, door)  # every call reached the world
        world = traj.world or {}
        assert world["final"] == world["gold"] == states[-1], (task, door)
        assert all(check["passed"] for check in world["checks"])
    paid = trajectories["pay_bob"]
    transfer = next(c for n in paid.nodes for c in n.calls if c.name == "transfer")
    assert transfer.args == {"source": "A-1", "target": "A-3", "amount": 200, "memo": "rent"}
    assert transfer.observation is not None and transfer.observation.ok
    if door in ("mcp", "virtual"):  # the other two doors' replays are the examples' tests'
        assert main(["replay", str(runs / door), "--out", str(tmp_path / "again"), "--json"]) == 0
        report = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
        assert report["divergent"] == 0 and report["episodes"] == 3


@asynccontextmanager
async def episode(task_id: str, seed: int) -> AsyncIterator[tuple[EpisodeScope, EpisodeUrls]]:
    suite = load_suite(TINYWORLD)
    task = next(t for t in suite.tasks if t.id == task_id)
    async with open_tool_envs(RunConfig(suite=str(TINYWORLD), seed=seed), suite) as tools:
        env = tools.for_episode(task, session=f"test/{uuid.uuid4().hex}")
        record = EpisodeRecord(
            agent=Component(name="external"),
            model=Component(name="none"),
            meta=EpisodeMeta(scenario_id=task.id),
            query=task.query,
            functions=[*env.functions, FINISH_FUNCTION],
            dispatch=env_dispatch(env),
        )
        scope = EpisodeScope(
            model=_NoModel(), env=env, record=record, budget=Budget(), max_observation_chars=None
        )
        async with episode_server(scope) as urls:
            yield scope, urls


class _NoModel:
    name = "none"

    async def complete(self, *args: Any) -> Any:
        raise AssertionError("no model request in these tests")


async def test_a_rest_call_opens_the_episodes_session_and_call_goes_on_from_it() -> None:
    async with episode("unfreeze_and_pay", seed=5) as (scope, urls), httpx.AsyncClient() as http:
        env = scope.env
        assert isinstance(env, WorldToolEnv) and env.position is None
        native = await http.post(
            f"{urls.base}/tools/bank/set_frozen", json={"account_id": "A-3", "frozen": False}
        )
        where = await env.client.get(f"/sessions/{env.session}")
        virtual = await http.post(
            f"{urls.base}/virtual",
            json={"tool_name": "bank", "api_name": "lottery", "tool_input": {"account_id": "A-2"}},
        )
        called = await http.post(
            f"{urls.base}/call",
            json={"name": "transfer", "arguments": {"source": "A-3", "target": "A-2", "amount": 1}},
        )
        balance = await http.post(
            f"{urls.base}/call", json={"name": "get_account", "arguments": {"account_id": "A-3"}}
        )
    assert native.json()["ok"] is True
    # opened by the sandbox for this episode: its task's initial state, the run's seed
    opened = where.json()
    assert (opened["task"], opened["seed"], opened["calls"]) == ("unfreeze_and_pay", 5, 1)
    assert opened["state"] == native.json()["state"] != opened["initial"]
    assert virtual.json()["error"] == ""
    assert virtual.headers["x-sandbox-state"] != native.json()["state"]
    assert json.loads(called.text)["error"] == ""  # A-3 was unfrozen by the REST call
    assert json.loads(balance.text)["response"]["balance"] == 399  # the task's 400, minus 1
    calls = [c for n in scope.record.nodes for c in n.calls]
    assert [c.name for c in calls] == [
        "set_frozen",
        "lottery",
        "transfer",
        "get_account",
    ]
    states = [c.observation.state for c in calls if c.observation is not None]
    assert states[0] == native.json()["state"]
    assert states[1] == virtual.headers["x-sandbox-state"]  # /virtual's, from its header
    assert None not in states and env.position == states[-1]


async def test_the_session_routes_are_refused_to_the_agent() -> None:
    async with episode("pay_bob", seed=0) as (scope, urls), httpx.AsyncClient() as http:
        env = scope.env
        assert isinstance(env, WorldToolEnv)
        paid = await http.post(
            f"{urls.base}/call",
            json={"name": "transfer", "arguments": {"source": "A-1", "target": "A-3", "amount": 5}},
        )
        tries = [
            await http.post(f"{urls.base}/sessions/{env.session}/reset"),
            await http.post(f"{urls.base}/sessions/{env.session}/restore", json={"state": "x"}),
            await http.get(f"{urls.base}/sessions/{env.session}/state"),
            await http.post(f"{urls.base}/sessions", json={"session": "elsewhere"}),
            await http.delete(f"{urls.base}/sessions/{env.session}"),
            await http.post(f"{urls.base}/reset"),
        ]
        where = (await env.client.get(f"/sessions/{env.session}")).json()
    assert json.loads(paid.text)["error"] == ""
    assert {r.status_code for r in tries} == {403}
    assert all("the episode's world session is the sandbox's" in r.json()["error"] for r in tries)
    assert where["calls"] == 1 and where["state"] == env.position  # untouched
