"""``/virtual`` answers what StableToolBench's client sends as StableToolBench's server does.

A suite imported from a query file (two tools of one name in two categories, parameters named
``ID``, ``driverId``, ``longUrl``) plus a StableToolBench cache (keyed by the names the client
sends), served in process. Every row is one request shape StableToolBench's client (or its
server's cache layout) produces and the status and body it must get; the typed routes keep
validating. A suite of the project's own keeps rejecting schema violations on ``/virtual``.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mock_tools.http_app import create_app
from mock_tools.suite import load_suite
from sandbox.interop.stb_cache import import_stb_cache
from sandbox.interop.toolbench_queries import import_queries


def _param(name: str, kind: str, default: Any = "") -> dict[str, Any]:
    return {"name": name, "type": kind, "description": "", "default": default}


QUERIES = [
    {
        "query": "Where is driver 44, and shorten https://example.com for me.",
        "query_id": 1,
        "api_list": [
            {
                "category_name": "Sports",
                "tool_name": "F1 Stats",
                "api_name": "Driver Details",
                "api_description": "One driver.",
                "required_parameters": [_param("ID", "NUMBER", 44)],
                "optional_parameters": [_param("driverId", "STRING")],
                "method": "GET",
            },
            {
                "category_name": "Tools",
                "tool_name": "Shortener",
                "api_name": "Shorten",
                "api_description": "Shortens a URL.",
                "required_parameters": [_param("longUrl", "STRING", "https://a.b")],
                "optional_parameters": [],
                "method": "POST",
            },
            {
                "category_name": "Data",
                "tool_name": "Shortener",
                "api_name": "Shorten",
                "api_description": "The Data category's tool of the same name.",
                "required_parameters": [_param("longUrl", "STRING")],
                "optional_parameters": [],
                "method": "POST",
            },
        ],
        "relevant APIs": [["F1 Stats", "Driver Details"]],
    }
]

CACHE = {
    # StableToolBench's cache: <Category>/<tool>_for_<category>/<api>.json, keyed by str() of
    # the arguments its client sent, in ToolBench's parameter names
    "Sports/f1_stats_for_Sports/driver_details.json": {
        "{'is_id': 44}": {"error": "", "response": {"name": "Lewis"}},
        "{'is_id': 44, 'driverid': 'ham'}": {"error": "", "response": {"name": "Lewis H."}},
    },
    "Tools/shortener_for_Tools/shorten.json": {
        "{'longurl': 'https://example.com'}": {"error": "", "response": "https://s.rt/1"},
    },
    "Data/shortener_for_Data/shorten.json": {
        "{'longurl': 'https://example.com'}": {"error": "", "response": "https://data.rt/9"},
    },
}


@pytest.fixture
async def client(tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    queries = tmp_path / "G1_instruction.json"
    queries.write_text(json.dumps(QUERIES), encoding="utf-8")
    import_queries([queries], tmp_path / "suite")
    for rel, entries in CACHE.items():
        path = tmp_path / "cache" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(entries), encoding="utf-8")
    summary = import_stb_cache(tmp_path / "cache", tmp_path / "suite")
    assert summary.written["tools"] == 0, "every cached API resolves onto the imported tools"
    app = create_app(load_suite(tmp_path / "suite"), miss_policy="error")
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as c,
    ):
        yield c


def _virtual(tool: str, api: str, tool_input: Any, category: str) -> dict[str, Any]:
    """The body StableToolBench's client posts (``rapidapi_wrapper._step``)."""
    return {
        "category": category,
        "tool_name": tool,
        "api_name": api,
        "tool_input": tool_input,
        "strip": "truncate",
        "toolbench_key": "",
    }


HIT_LEWIS = {"error": "", "response": {"name": "Lewis"}}

ROWS = [
    # (what, body, answer: exact body | "miss" (the error policy's 200) | "unreadable")
    (
        "ID sent as is_id",
        _virtual("f1_stats", "driver_details", '{"is_id": 44}', "Sports"),
        HIT_LEWIS,
    ),
    (
        "the original spelling ID",
        _virtual("f1_stats", "driver_details", '{"ID": 44}', "Sports"),
        HIT_LEWIS,
    ),
    (
        "a number as text",
        _virtual("f1_stats", "driver_details", '{"is_id": "44"}', "Sports"),
        HIT_LEWIS,
    ),
    (
        "driverId sent as driverid",
        _virtual("f1_stats", "driver_details", '{"is_id": 44, "driverid": "ham"}', "Sports"),
        {"error": "", "response": {"name": "Lewis H."}},
    ),
    (
        "longUrl sent as longurl",
        _virtual("shortener", "shorten", '{"longurl": "https://example.com"}', "Tools"),
        {"error": "", "response": "https://s.rt/1"},
    ),
    (
        "the other category's tool of that name",
        _virtual("shortener", "shorten", '{"longurl": "https://example.com"}', "Data"),
        {"error": "", "response": "https://data.rt/9"},
    ),
    (
        "tool_name as <tool>_for_<category>",
        _virtual("shortener_for_Data", "shorten", '{"longurl": "https://example.com"}', "Data"),
        {"error": "", "response": "https://data.rt/9"},
    ),
    (
        "api_name as a function name",
        _virtual("f1_stats", "driver_details_for_f1_stats", {"is_id": 44}, "Sports"),
        HIT_LEWIS,
    ),
    (
        "tool_input as an object",
        _virtual("f1_stats", "driver_details", {"is_id": 44}, "Sports"),
        HIT_LEWIS,
    ),
    (
        "tool_input not JSON",
        _virtual("f1_stats", "driver_details", "{is_id: 44", "Sports"),
        "unreadable",
    ),
    (
        "tool_input a JSON list",
        _virtual("f1_stats", "driver_details", "[44]", "Sports"),
        "unreadable",
    ),
    (
        "unrecorded arguments",
        _virtual("f1_stats", "driver_details", '{"is_id": 7}', "Sports"),
        "miss",
    ),
    ("a required parameter missing", _virtual("f1_stats", "driver_details", "", "Sports"), "miss"),
    (
        "a value of the wrong type",
        _virtual("f1_stats", "driver_details", '{"is_id": "forty"}', "Sports"),
        "miss",
    ),
]


@pytest.mark.parametrize(("what", "body", "answer"), ROWS, ids=[r[0] for r in ROWS])
async def test_virtual_answers_stabletoolbenchs_requests_with_200(
    client: httpx.AsyncClient, what: str, body: dict[str, Any], answer: Any
) -> None:
    r = await client.post("/virtual", json=body)
    assert r.status_code == 200, (what, r.text)
    got = r.json()
    if answer == "miss":
        assert set(got) == {"error", "response"} and got["error"].startswith("no recording")
    elif answer == "unreadable":
        assert got == {"error": got["error"], "response": ""} and got["error"]
    else:
        assert got == answer


async def test_typed_routes_still_validate_and_read_any_spelling(
    client: httpx.AsyncClient,
) -> None:
    """The typed routes reject a schema violation (422); a spelling that standardises to a
    parameter reaches it there too."""
    paths = {
        (tool["name"], api["name"]): api["path"]
        for tool in (await client.get("/tools")).json()
        for api in tool["apis"]
    }
    path = paths[("F1 Stats", "Driver Details")]
    assert (await client.post(path, json={"is_id": "forty"})).status_code == 422
    assert (await client.post(path, json={})).status_code == 422
    for spelling in ({"is_id": 44}, {"ID": 44}, {"Id": "44"}):
        r = await client.post(path, json=spelling)
        assert r.status_code == 200 and r.json()["body"] == {"name": "Lewis"}, spelling


async def test_native_route_answers_a_violation_as_an_unrecorded_call(
    client: httpx.AsyncClient,
) -> None:
    r = await client.post("/tools/F1 Stats/Driver Details", json={"is_id": "forty"})
    assert r.status_code == 200 and r.json()["code"] == "no_recording"


async def test_a_suite_of_its_own_keeps_rejecting_violations_on_virtual() -> None:
    root = Path(__file__).resolve().parents[3] / "scenarios" / "default"
    app = create_app(load_suite(root))
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as c,
    ):
        catalog = (await c.get("/tools")).json()
        tool = next(t for t in catalog if any(a["parameters"].get("required") for a in t["apis"]))
        api = next(a for a in tool["apis"] if a["parameters"].get("required"))
        body = {"tool_name": tool["name"], "api_name": api["name"], "tool_input": {}}
        assert (await c.post("/virtual", json=body)).status_code == 422
