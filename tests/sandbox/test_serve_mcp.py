"""``sandbox serve --mcp`` on 127.0.0.1 and ``--mcp-stdio``, reached by any MCP client.

What it protects: the documented way to serve a suite speaks MCP to the SDK's client (both its
protocol eras) and to a hand-written JSON-RPC client over plain HTTP, on the same server as the
REST routes; the tools are the suite's APIs and a recorded call answers the body ``/virtual``
answers; MCP sessions keep their own occurrence counts; stdio works without HTTP.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from mcp import Client, StdioServerParameters
from served_suite import DEFAULT_SUITE as DEFAULT
from served_suite import ROOT, start_server, stop_server

from mock_tools import Suite, function_name, load_suite
from tests.agents.models.openai_server import free_port

ACCEPT = {"Accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    port = free_port()
    proc = start_server(DEFAULT, port)
    yield f"http://127.0.0.1:{port}"
    stop_server(proc)


@pytest.fixture(scope="module")
def suite() -> Suite:
    return load_suite(DEFAULT)


def _recorded_call(suite: Suite) -> tuple[str, str, dict[str, Any]]:
    """A call with one recorded answer for every occurrence."""
    rec = next(r for r in suite.recordings if r.occurrence is None and r.response.ok)
    return rec.tool, rec.api, rec.args


def _virtual(base: str, tool: str, api: str, args: dict[str, Any]) -> bytes:
    body = {"tool_name": tool, "api_name": api, "tool_input": args}
    return httpx.post(f"{base}/virtual", json=body, timeout=10).content


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_sdk_client_lists_the_suite_and_calls_a_recording(server, suite, mode) -> None:
    tool, api, args = _recorded_call(suite)
    async with Client(f"{server}/mcp", mode=mode) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool(function_name(tool, api), args)
    assert len(tools) == len(suite.apis)
    assert {t.name for t in tools} == {function_name(t, a) for t, a in suite.apis}
    assert not result.is_error
    assert result.content[0].text.encode() == _virtual(server, tool, api, args)
    assert httpx.get(f"{server}/health").json()["status"] == "ok"  # REST beside MCP


def _rpc(
    client: httpx.Client, method: str, params: Any = None, *, id: int | None = 1, **headers: str
) -> httpx.Response:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if id is not None:
        message["id"] = id
    if params is not None:
        message["params"] = params
    return client.post("/mcp", json=message, headers={**ACCEPT, **headers})


def _result(response: httpx.Response) -> dict[str, Any]:
    """The JSON-RPC message of an answer sent as JSON or as server-sent events."""
    if response.headers["content-type"].startswith("application/json"):
        return response.json()
    data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
    return json.loads(data[-1])


def test_plain_json_rpc_over_http(server, suite) -> None:
    tool, api, args = _recorded_call(suite)
    with httpx.Client(base_url=server, timeout=10) as http:
        init = _rpc(
            http,
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "curl-like", "version": "0"},
            },
        )
        assert init.status_code == 200
        session = {"Mcp-Session-Id": init.headers["mcp-session-id"]}
        assert _result(init)["result"]["serverInfo"]["name"] == f"mock-tools:{suite.name}"
        assert _rpc(http, "notifications/initialized", id=None, **session).status_code == 202
        listed = _result(_rpc(http, "tools/list", id=2, **session))["result"]["tools"]
        assert len(listed) == len(suite.apis)
        assert all(t["inputSchema"]["type"] == "object" for t in listed)
        call = {"name": function_name(tool, api), "arguments": args}
        answer = _result(_rpc(http, "tools/call", call, id=3, **session))["result"]
        assert answer["isError"] is False
        assert answer["content"][0]["text"].encode() == _virtual(server, tool, api, args)
        # The same call twice in one session: its recorded sequence (429, then the weather).
        retry = {"name": "current_weather_for_weather", "arguments": {"city": "Rotterdam"}}
        first = _result(_rpc(http, "tools/call", retry, id=4, **session))["result"]
        second = _result(_rpc(http, "tools/call", retry, id=5, **session))["result"]
        assert first["isError"] and "429" in first["structuredContent"]["error"]
        assert not second["isError"]
        unknown = _result(_rpc(http, "no/such/method", {}, id=6, **session))
        assert unknown["error"]["code"] == -32601
        assert (
            http.post(
                "/mcp", json={"jsonrpc": "2.0", "id": 7, "method": "tools/list"}, headers=ACCEPT
            ).status_code
            == 400
        )  # no session


async def test_two_sessions_never_share_occurrences(server) -> None:
    call = ("current_weather_for_weather", {"city": "Rotterdam"})
    async with (
        Client(f"{server}/mcp", mode="legacy") as a,
        Client(f"{server}/mcp", mode="legacy") as b,
    ):
        seen = [(await c.call_tool(*call)).is_error for c in (a, b, a, b)]  # a1 b1 a2 b2
    assert seen == [True, True, False, False]


async def test_stdio_serves_without_http(suite) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "sandbox", "serve", str(DEFAULT), "--mcp-stdio"],
        cwd=str(ROOT),
    )
    tool, api, args = _recorded_call(suite)
    async with Client(params) as client:
        tools = (await client.list_tools()).tools
        result = await client.call_tool(function_name(tool, api), args)
    assert len(tools) == len(suite.apis)
    assert json.loads(result.content[0].text)["error"] == ""
