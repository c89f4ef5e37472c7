"""Hardening, round two (issue 27): numbers JSON cannot hold, simulator failures, and what a
live tool answered against what its replay serves.

Each test is named for its item of the issue (item N is test number 21 + N)."""

from __future__ import annotations

import json

import pytest

from mock_tools import create_service, http_app, in_process_client, load_suite
from tests.hostile.conftest import MINI
from tests.hostile.mcp_stdio import StdioServer, call

# -- item 14: NaN, Infinity and 1e999 in what a client sends -------------------------------------

NOT_JSON = ['{"parcel_id": NaN}', '{"parcel_id": Infinity}', '{"parcel_id": -Infinity}']
TOO_LARGE = ['{"parcel_id": 1e999}', '{"parcel_id": -1e400}']


def _routes(body: str) -> list[tuple[str, str]]:
    """The same arguments on every HTTP call route: native, typed, /virtual (object and the
    JSON-in-a-string form of ``tool_input``)."""
    virtual = '{"tool_name": "shipping", "api_name": "track_parcel", "tool_input": %s}'
    return [
        ("/tools/shipping/track_parcel", body),
        ("/api/shipping/track_parcel", body),
        ("/virtual", virtual % body),
        ("/virtual", virtual % json.dumps(body)),
    ]


@pytest.mark.parametrize("body", NOT_JSON + TOO_LARGE)
async def test_35_non_json_numbers_in_a_call_are_400_on_every_route(body: str) -> None:
    """`NaN`, `Infinity` and numbers too large for a double are not JSON: every call route
    answers 400 `malformed_json` with a message saying so, never 200 with "nan"/"inf" read as
    the argument."""
    app = http_app(create_service(load_suite(MINI)))
    async with in_process_client(app) as client:
        for path, raw in _routes(body):
            r = await client.post(path, content=raw, headers={"content-type": "application/json"})
            assert r.status_code == 400, (path, raw, r.text)
            payload = r.json()
            assert payload["code"] == "malformed_json", (path, payload)
            if "tool_input" not in raw or not raw.endswith('"}'):
                assert "not valid JSON" in payload["error"], payload


def test_35_non_json_numbers_in_mcp_arguments_are_a_json_rpc_error() -> None:
    """Over MCP the SDK reads such numbers; the server refuses them as invalid params (-32602)
    naming where they are, and never looks the call up."""
    server = StdioServer(MINI)
    try:
        server.initialize()
        for n, number in enumerate(["NaN", "Infinity", "-Infinity", "1e999"], 1):
            line = json.dumps(call(n, "track_parcel_for_shipping", {"parcel_id": {"x": [0]}}))
            server.send(line.replace("[0]", f"[{number}]"))
            answer = server.receive()
            assert answer["id"] == n and answer["error"]["code"] == -32602, answer
            assert "parcel_id/x/0" in answer["error"]["message"], answer
        server.send(call(9, "stats_are_not_a_tool", {}))
        assert server.receive()["error"]["code"] == -32602
    finally:
        server.stop()


async def test_35_finite_numbers_still_work() -> None:
    """The edges that are JSON stay accepted: the largest double, and an underflow to 0."""
    app = http_app(create_service(load_suite(MINI)))
    async with in_process_client(app) as client:
        for raw in ['{"parcel_id": "PX-100", "n": 1.7976931348623157e308}', '{"n": 1e-999}']:
            r = await client.post(
                "/tools/shipping/track_parcel", content=raw, headers={"content-type": "text/plain"}
            )
            assert r.status_code != 400, r.text
