"""``sandbox serve`` of a world suite over MCP: every MCP session has its own world.

What it protects, with the official MCP SDK client against ``sandbox serve --mcp`` (a
subprocess) and ``--mcp-stdio``: the world's tools are listed with ``readOnlyHint`` saying which
write; two MCP sessions never see each other's writes, and each is the HTTP session
``mcp:<Mcp-Session-Id>`` (its state readable at ``GET /sessions/...``); a client that sends
``X-Sandbox-Session`` works in that very session, the one ``POST /sessions`` opened at a task
with a seed, shared with the REST routes; a call that names no session gets a world of its own;
over stdio the process's one connection is one session.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from served_suite import ROOT, start_server, stop_server

from tests.agents.models.openai_server import free_port

TINYWORLD = ROOT / "tests" / "fixtures" / "suites" / "tinyworld"
PAY = {"source": "A-1", "target": "A-3", "amount": 200, "memo": "rent"}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    proc = start_server(TINYWORLD, port)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


def _client(base: str, headers: dict[str, str] | None = None, ids: list[str] | None = None) -> Any:
    """An SDK client on a session of its own (the 2025 protocol), sending ``headers``; the
    ``Mcp-Session-Id`` the server gave goes to ``ids``."""

    async def keep(response: httpx2.Response) -> None:
        found = response.headers.get("mcp-session-id")
        if ids is not None and found and found not in ids:
            ids.append(found)

    http = httpx2.AsyncClient(headers=headers or {}, event_hooks={"response": [keep]})
    return Client(streamable_http_client(f"{base}/mcp", http_client=http), mode="legacy")


def _balance(result: Any) -> int:
    assert not result.is_error, result.content
    return int(result.structured_content["body"]["balance"])


async def test_each_mcp_session_has_its_own_world(server: str) -> None:
    ids: list[str] = []
    async with _client(server, ids=ids) as a, _client(server) as b:
        listed = {t.name: t.annotations for t in (await a.list_tools()).tools}
        paid = await a.call_tool("transfer", PAY)
        mine = await a.call_tool("get_account", {"account_id": "A-1"})
        theirs = await b.call_tool("get_account", {"account_id": "A-1"})
    assert listed["get_account"].read_only_hint is True
    assert listed["transfer"].read_only_hint is False
    assert not paid.is_error and paid.structured_content["provenance"] == "world"
    assert _balance(mine) == 800 and _balance(theirs) == 1000
    # the session is the HTTP session mcp:<Mcp-Session-Id>: where it is, what it holds
    (session_id,) = ids
    where = httpx.get(f"{server}/sessions/mcp:{session_id}", timeout=10).json()
    assert where["state"] == mine.structured_content["state"] == paid.structured_content["state"]
    assert where["calls"] == 2
    state = httpx.get(f"{server}/sessions/mcp:{session_id}/state", timeout=10).json()
    assert state["data"]["accounts"]["A-1"]["balance"] == 800


async def test_a_named_session_is_the_one_post_sessions_opened_and_rest_shares_it(
    server: str,
) -> None:
    opened = httpx.post(
        f"{server}/sessions",
        json={"session": "client/7", "task": "unfreeze_and_pay", "seed": 7},
        timeout=10,
    )
    assert opened.status_code == 201
    async with _client(server, {"X-Sandbox-Session": "client/7"}) as client:
        start = await client.call_tool("get_account", {"account_id": "A-3"})
        await client.call_tool("set_frozen", {"account_id": "A-3", "frozen": False})
        drawn = await client.call_tool("lottery", {"account_id": "A-2"})
    assert _balance(start) == 400  # the task's initial state, not the base one
    where = httpx.get(f"{server}/sessions/client/7", timeout=10).json()
    assert (where["task"], where["seed"], where["calls"]) == ("unfreeze_and_pay", 7, 3)
    assert where["state"] == drawn.structured_content["state"]
    # the REST routes, with the same header, act on the same world
    rest = httpx.post(
        f"{server}/tools/bank/transfer",
        json={"source": "A-3", "target": "A-2", "amount": 100},
        headers={"X-Sandbox-Session": "client/7"},
        timeout=10,
    ).json()
    assert rest["ok"], rest  # possible only because MCP unfroze A-3 in this session
    # the seed is the session's: another session at the same task and seed draws the same
    httpx.post(
        f"{server}/sessions",
        json={"session": "client/7b", "task": "unfreeze_and_pay", "seed": 7},
        timeout=10,
    )
    headers = {"X-Sandbox-Session": "client/7b"}
    httpx.post(
        f"{server}/tools/bank/set_frozen",
        json={"account_id": "A-3", "frozen": False},
        headers=headers,
        timeout=10,
    )
    again = httpx.post(
        f"{server}/tools/bank/lottery", json={"account_id": "A-2"}, headers=headers, timeout=10
    ).json()
    assert again["body"] == drawn.structured_content["body"]


async def test_a_call_that_names_no_session_has_a_world_of_its_own(server: str) -> None:
    async with Client(f"{server}/mcp") as client:  # the stateless protocol: no session
        paid = await client.call_tool("transfer", PAY)
        after = await client.call_tool("get_account", {"account_id": "A-1"})
    assert not paid.is_error
    assert _balance(after) == 1000


async def test_over_stdio_the_process_is_one_session() -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sandbox", "serve", str(TINYWORLD), "--mcp-stdio"],
        cwd=str(ROOT),
    )
    async with Client(params) as client:
        await client.call_tool("transfer", PAY)
        after = await client.call_tool("get_account", {"account_id": "A-1"})
    assert _balance(after) == 800
    async with Client(params) as client:  # another process: another world
        fresh = await client.call_tool("get_account", {"account_id": "A-1"})
    assert _balance(fresh) == 1000
    assert json.loads(fresh.content[0].text)["error"] == ""
