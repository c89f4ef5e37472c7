"""The MCP transport over the mock tool service, with the SDK's client connected in process.

What it protects: tool names and schemas are the suite's (as agents see them in OpenAI tools);
answers are the service's (the text is the /virtual body, structuredContent the native answer);
bad arguments and faults are tool errors, an unknown tool a JSON-RPC error; occurrences are
counted per named session and never shared between sessions.
"""

from __future__ import annotations

from typing import Any

import pytest
from mcp import Client, MCPError

from mock_tools import MockToolService, create_service, function_name, http_app, in_process_client
from mock_tools.mcp_server import META_FAULTS, META_SCENARIO, META_SESSION, mcp_server


@pytest.fixture
def service(suite) -> MockToolService:
    return create_service(suite)


async def _call(client: Client, name: str, args: dict[str, Any], **meta: Any) -> Any:
    return await client.call_tool(name, args, meta=meta or None)


async def test_tools_are_the_suite_apis_with_their_schemas(service, suite) -> None:
    async with Client(mcp_server(service)) as client:
        listed = (await client.list_tools()).tools
    assert len(listed) == len(suite.apis)
    by_name = {t.name: t for t in listed}
    for (tool, api), spec in suite.apis.items():
        t = by_name[function_name(tool, api)]
        assert t.input_schema == spec.parameters
        assert t.meta == {"agent-sandbox/tool": tool, "agent-sandbox/api": api}


async def test_tool_list_pages_through_every_tool(service, suite) -> None:
    async with Client(mcp_server(service, page_size=1)) as client:
        names, cursor, pages = [], None, 0
        while True:
            page = await client.list_tools(cursor=cursor)
            names += [t.name for t in page.tools]
            pages += 1
            cursor = page.next_cursor
            if not cursor:
                break
        with pytest.raises(MCPError):
            await client.list_tools(cursor="not-a-number")
    assert pages == len(suite.apis) and len(set(names)) == len(suite.apis)


async def test_a_recorded_call_answers_the_virtual_body(service) -> None:
    async with Client(mcp_server(service)) as client:
        result = await _call(client, "current_for_weather_now", {"city": " Oslo", "days": "1"})
    assert not result.is_error
    assert result.structured_content == {
        "ok": True,
        "body": {"temp_c": 3, "sky": "snow"},
        "error": "",
        "provenance": "hit",
    }
    async with in_process_client(http_app(service)) as http:
        virtual = await http.post(
            "/virtual",
            json={
                "tool_name": "Weather Now",
                "api_name": "current",
                "tool_input": {"city": "Oslo"},
            },
        )
    assert result.content[0].text.encode() == virtual.content


async def test_recorded_error_and_miss_are_tool_errors(service) -> None:
    async with Client(mcp_server(service)) as client:
        recorded = await _call(client, "current_for_weather_now", {"city": "Atlantis"})
        missing = await _call(client, "current_for_weather_now", {"city": "Nowhere"})
    assert recorded.is_error and recorded.structured_content["error"] == "city not found"
    assert missing.is_error and missing.structured_content["code"] == "no_recording"
    assert missing.structured_content["provenance"] == "miss"


async def test_bad_arguments_are_a_tool_error_listing_the_violations(service) -> None:
    async with Client(mcp_server(service)) as client:
        result = await _call(client, "current_for_weather_now", {"units": "kelvin"})
        empty = await client.call_tool("current_for_weather_now", None)
    assert result.is_error
    body = result.structured_content
    assert body["code"] == "invalid_arguments" and body["provenance"] == "invalid"
    assert {v["path"] for v in body["violations"]} == {"(root)", "units"}
    assert empty.is_error and empty.structured_content["code"] == "invalid_arguments"
    assert service.stats.totals["invalid"] == 2


async def test_an_unknown_tool_is_a_protocol_error_naming_close_tools(service) -> None:
    async with Client(mcp_server(service)) as client:
        with pytest.raises(MCPError) as err:
            await _call(client, "current_for_weather_nwo", {"city": "Oslo"})
    assert err.value.code == -32602
    assert "current_for_weather_now" in err.value.message


async def test_occurrences_are_counted_per_session_and_never_shared(service) -> None:
    def status(result: Any) -> str:
        return result.structured_content["body"]["status"]

    async with Client(mcp_server(service)) as client:
        a1 = await _call(client, "order_status_for_shop", {"order_id": "A1"}, **{META_SESSION: "a"})
        b1 = await _call(client, "order_status_for_shop", {"order_id": "A1"}, **{META_SESSION: "b"})
        a2 = await _call(client, "order_status_for_shop", {"order_id": "A1"}, **{META_SESSION: "a"})
        b2 = await _call(client, "order_status_for_shop", {"order_id": "A1"}, **{META_SESSION: "b"})
        anonymous = [await _call(client, "order_status_for_shop", {"order_id": "A1"})]
        anonymous.append(await _call(client, "order_status_for_shop", {"order_id": "A1"}))
    assert [status(r) for r in (a1, b1, a2, b2)] == ["pending", "pending", "shipped", "shipped"]
    # A call that names no session (a stateless client) is a scope of its own.
    assert [status(r) for r in anonymous] == ["pending", "pending"]


async def test_stdio_connection_is_one_scope(service) -> None:
    async with Client(mcp_server(service, stdio=True)) as client:
        first = await _call(client, "order_status_for_shop", {"order_id": "A1"})
        second = await _call(client, "order_status_for_shop", {"order_id": "A1"})
    assert first.structured_content["body"]["status"] == "pending"
    assert second.structured_content["body"]["status"] == "shipped"


async def test_faults_from_meta_and_per_scenario_are_tool_errors(service) -> None:
    faults = {"rate": 1.0, "kinds": ["http_500"], "seed": 3}
    async with Client(mcp_server(service)) as client:
        forced = await _call(
            client, "current_for_weather_now", {"city": "Oslo"}, **{META_FAULTS: faults}
        )
        scenario = await _call(
            client, "order_status_for_shop", {"order_id": "A1"}, **{META_SCENARIO: "order-twice"}
        )
        bad = await _call(
            client, "current_for_weather_now", {"city": "Oslo"}, **{META_FAULTS: {"rate": 7}}
        )
    assert forced.is_error and forced.structured_content["provenance"] == "fault:http_500"
    assert scenario.is_error and scenario.structured_content["provenance"] == "fault:http_500"
    assert bad.is_error and bad.structured_content["code"] == "bad_fault_header"
