"""A world served: every session its own state, atomic calls, snapshots and restores over HTTP,
and a call limit no world code escapes."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mock_tools import create_app, in_process_client, load_suite

TINY = Path(__file__).resolve().parents[2] / "fixtures" / "suites" / "tinyworld"


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    suite = shutil.copytree(TINY, tmp_path / "tinyworld")
    async with in_process_client(create_app(load_suite(suite))) as c:
        yield c


def session(name: str, task: str | None = None) -> dict[str, str]:
    headers = {"X-Sandbox-Session": name}
    if task:
        headers["X-Sandbox-Scenario"] = task
    return headers


async def call(c: httpx.AsyncClient, name: str, api: str, **args: Any) -> dict[str, Any]:
    r = await c.post(f"/tools/bank/{api}", json=args, headers=session(name))
    assert r.status_code == 200, r.text
    return dict(r.json())


async def test_a_write_changes_only_its_own_sessions_state(client: httpx.AsyncClient) -> None:
    a = await call(client, "a", "transfer", source="A-1", target="A-2", amount=100)
    assert a["ok"] and a["provenance"] == "world"
    assert [c["id"] for c in a["changes"]] == ["A-1", "A-2", "T-1"]
    b = await call(client, "b", "get_account", account_id="A-1")
    assert b["body"]["balance"] == 1000  # b never sees a's write
    again = await call(client, "a", "get_account", account_id="A-1")
    assert again["body"]["balance"] == 900 and again["state"] == a["state"]
    assert again["changes"] == []  # a read changes nothing


async def test_the_same_state_and_call_give_the_same_answer_in_every_session(
    client: httpx.AsyncClient,
) -> None:
    one = await call(client, "one", "lottery", account_id="A-2")
    two = await call(client, "two", "lottery", account_id="A-2")
    assert one["body"] == two["body"] and one["state"] == two["state"]
    other = await client.post("/sessions", json={"session": "three", "seed": 9})
    assert other.status_code == 201
    three = await call(client, "three", "lottery", account_id="A-2")
    assert three["state"] != one["state"]  # another episode seed, another draw


async def test_a_tool_that_raises_after_writing_leaves_the_state_as_it_was(
    client: httpx.AsyncClient,
) -> None:
    before = await call(client, "s", "get_account", account_id="A-1")
    failed = await call(client, "s", "broken_write", account_id="A-1")
    assert not failed["ok"] and failed["code"] == "tool_error"
    assert failed["error"] == "RuntimeError: the disk is full"
    assert failed["state"] == before["state"] and failed["changes"] == []
    after = await call(client, "s", "get_account", account_id="A-1")
    assert after["body"]["balance"] == 1000


@pytest.mark.parametrize(
    ("api", "args", "error"),
    [
        ("sneaky_read", {"account_id": "A-1"}, "a read tool cannot write"),
        ("not_json", {}, "not a JSON value"),
        ("transfer", {"source": "A-3", "target": "A-1", "amount": 5}, "account A-3 is frozen"),
    ],
)
async def test_refused_calls_are_error_answers_with_the_state_unchanged(
    client: httpx.AsyncClient, api: str, args: dict[str, Any], error: str
) -> None:
    start = (await client.post("/sessions", json={"session": "s"})).json()["state"]
    out = await call(client, "s", api, **args)
    assert not out["ok"] and error in out["error"] and out["state"] == start


async def test_arguments_the_tool_does_not_take_are_a_schema_violation(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post(
        "/tools/bank/get_account", json={"account_id": "A-1", "pin": 1}, headers=session("s")
    )
    assert r.status_code == 422
    assert "pin" in r.text


async def test_snapshot_restore_reset_and_state_over_http(client: httpx.AsyncClient) -> None:
    opened = (await client.post("/sessions", json={"session": "run/t/0", "task": "pay_bob"})).json()
    assert opened["task"] == "pay_bob" and opened["state"] == opened["initial"]
    first = await call(client, "run/t/0", "transfer", source="A-1", target="A-2", amount=1)
    snap = (await client.post("/sessions/run%2Ft%2F0/snapshot")).json()["state"]
    assert snap == first["state"]
    await call(client, "run/t/0", "transfer", source="A-1", target="A-2", amount=2)
    back = await client.post("/sessions/run/t/0/restore", json={"state": snap})
    assert back.status_code == 200 and back.json()["state"] == snap
    state = (await client.get("/sessions/run/t/0/state")).json()
    assert state["state"] == snap and state["data"]["accounts"]["A-2"]["balance"] == 51
    reset = (await client.post("/sessions/run/t/0/reset")).json()
    assert reset["state"] == opened["initial"]
    missing = await client.post("/sessions/run/t/0/restore", json={"state": "f" * 64})
    assert missing.status_code == 404
    assert (await client.get("/sessions/nobody")).status_code == 404
    assert (await client.post("/sessions", json={"task": "no-such-task"})).status_code == 404
    assert (await client.delete("/sessions/run/t/0")).json() == {"dropped": 1}
    paths = (await client.get("/openapi.json")).json()["paths"]
    assert "/sessions/{session}/restore" in paths and "/sessions" in paths


async def test_a_session_opens_at_its_tasks_initial_state_and_clock(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post(
        "/tools/bank/get_account",
        json={"account_id": "A-3"},
        headers=session("e", "unfreeze_and_pay"),
    )
    assert r.json()["body"]["balance"] == 400  # the task's patch
    described = (await client.get("/sessions/e")).json()
    assert described["now"].startswith("2026-02-01T08:30:00")
    await call(client, "e", "set_frozen", account_id="A-3", frozen=False)
    paid = await call(client, "e", "transfer", source="A-3", target="A-2", amount=1)
    state = (await client.get("/sessions/e/state")).json()["data"]
    assert state["transfers"][paid["body"]["transfer"]]["at"].startswith("2026-02-01T08:30:00")


async def test_reset_at_the_end_of_an_episode_forgets_its_session(
    client: httpx.AsyncClient,
) -> None:
    await call(client, "gone", "transfer", source="A-1", target="A-2", amount=1)
    await client.post("/reset", headers=session("gone"))
    assert (await client.get("/sessions/gone")).status_code == 404


async def test_concurrent_writes_of_one_session_never_lose_an_update(
    client: httpx.AsyncClient,
) -> None:
    await asyncio.gather(
        *(call(client, "busy", "transfer", source="A-1", target="A-2", amount=1) for _ in range(20))
    )
    final = await call(client, "busy", "get_account", account_id="A-2")
    assert final["body"]["balance"] == 70


async def test_concurrent_sessions_never_see_each_others_writes(
    client: httpx.AsyncClient,
) -> None:
    async def episode(i: int) -> int:
        for _ in range(5):
            await call(client, f"ep{i}", "transfer", source="A-1", target="A-2", amount=i + 1)
        return int(
            (await call(client, f"ep{i}", "get_account", account_id="A-2"))["body"]["balance"]
        )

    balances = await asyncio.gather(*(episode(i) for i in range(8)))
    assert balances == [50 + 5 * (i + 1) for i in range(8)]


def test_a_world_call_that_never_returns_ends_with_an_infrastructure_error(tmp_path: Path) -> None:
    suite = shutil.copytree(TINY, tmp_path / "slow")
    (suite / "suite.yaml").write_text(
        "name: slow\nworld: world.py:Slow\nworld_call_seconds: 0.3\n", encoding="utf-8"
    )
    (suite / "world.py").write_text(
        '''
from mock_tools.worlds import Context, World, read


class Slow(World):
    name = "slow"

    @read
    def spin(self, ctx: Context) -> int:
        """Never returns."""
        n = 0
        while True:
            n += 1

    @read
    def ping(self, ctx: Context) -> str:
        """Answers."""
        return "pong"
''',
        encoding="utf-8",
    )
    shutil.rmtree(suite / "tasks")

    async def go() -> tuple[httpx.Response, httpx.Response]:
        async with in_process_client(create_app(load_suite(suite))) as c:
            spun = await c.post("/tools/slow/spin", json={}, headers=session("x"))
            pinged = await c.post("/tools/slow/ping", json={}, headers=session("x"))
            return spun, pinged

    spun, pinged = asyncio.run(asyncio.wait_for(go(), 20))
    body = spun.json()
    assert spun.status_code == 500 and body["infra"] is True and body["code"] == "call_timeout"
    assert body["provenance"] == "world_timeout"
    assert pinged.json()["body"] == "pong"  # the next call does not wait behind the runaway one
