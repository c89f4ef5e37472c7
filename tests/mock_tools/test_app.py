"""The app in process: routes, provenance, bad input, determinism, occurrences, faults."""

import json

import pytest

from mock_tools import (
    PROVENANCE_HEADER,
    SCENARIO_HEADER,
    SESSION_HEADER,
    FaultConfig,
    create_app,
    in_process_client,
)
from mock_tools.errors import MockToolsError

OSLO = {"ok": True, "body": {"temp_c": 3, "sky": "snow"}, "error": "", "provenance": "hit"}


@pytest.fixture
async def client(suite):
    async with in_process_client(create_app(suite)) as c:
        yield c


async def test_native_hit_and_provenance_header(client):
    r = await client.post("/tools/Weather Now/current", json={"city": "Oslo"})
    assert r.status_code == 200
    assert r.json() == OSLO
    assert r.headers[PROVENANCE_HEADER] == "hit"


@pytest.mark.parametrize(
    "args",
    [
        {"city": "Oslo"},
        {"city": " Oslo ", "days": "1"},
        {"days": 1.0, "city": "Oslo", "units": None},
    ],
)
async def test_key_order_and_scalar_spelling_give_the_same_answer(client, args):
    r = await client.post("/tools/weather_now/current", content=json.dumps(args))
    assert r.json() == OSLO


async def test_recorded_error_is_served_as_the_tools_behaviour(client):
    r = await client.post("/tools/Weather Now/current", json={"city": "Atlantis"})
    assert r.status_code == 200
    assert r.json() == {"ok": False, "body": None, "error": "city not found", "provenance": "hit"}


async def test_miss_is_structured_and_distinct_from_unknown_api(client):
    miss = await client.post("/tools/Weather Now/current", json={"city": "Lima"})
    assert miss.status_code == 200
    assert miss.headers[PROVENANCE_HEADER] == "miss"
    assert miss.json()["ok"] is False and miss.json()["code"] == "no_recording"
    assert "Lima" in miss.json()["error"]
    again = await client.post("/tools/Weather Now/current", json={"city": "Lima"})
    assert again.json() == miss.json()

    unknown = await client.post("/tools/Weather Now/forecast", json={})
    assert unknown.status_code == 404
    assert unknown.json()["code"] == "unknown_api"
    assert unknown.headers[PROVENANCE_HEADER] == "unknown"
    assert "Weather Now/current" in unknown.json()["suggestions"]


async def test_unknown_tool_names_closest_tools(client):
    r = await client.post("/tools/Wether Now/current", json={})
    assert r.status_code == 404
    assert r.json()["suggestions"][0] == "Weather Now/current"


async def test_schema_violations_are_listed(client):
    r = await client.post("/tools/Weather Now/current", json={"units": "kelvin", "days": 0})
    assert r.status_code == 422
    body = r.json()
    assert body["code"] == "invalid_arguments"
    paths = [v["path"] for v in body["violations"]]
    assert paths == sorted(paths)
    assert set(paths) == {"(root)", "days", "units"}
    assert r.headers[PROVENANCE_HEADER] == "invalid"


@pytest.mark.parametrize(
    ("content", "status", "code"),
    [
        (b"{not json", 400, "malformed_json"),
        (b"\xff\xfe", 400, "malformed_json"),
        (b"[1, 2]", 422, "not_an_object"),
        (b'"Oslo"', 422, "not_an_object"),
        (b"[" * 100_000 + b"]" * 100_000, 413, "body_too_large"),
    ],
)
async def test_bad_bodies(suite, content, status, code):
    app = create_app(suite, max_body_bytes=50_000)
    async with in_process_client(app) as c:
        r = await c.post("/tools/Weather Now/current", content=content)
    assert r.status_code == status
    assert r.json()["code"] == code


async def test_deeply_nested_json_is_rejected_not_crashing(client):
    r = await client.post("/tools/shop/id", content=b"[" * 200_000 + b"]" * 200_000)
    assert r.status_code == 422  # well-formed JSON nested past the limit: too_deep, not malformed
    assert r.json()["code"] == "too_deep"


async def test_body_too_large_without_content_length(suite):
    app = create_app(suite, max_body_bytes=100)

    async def chunks():
        for _ in range(10):
            yield b" " * 50

    async with in_process_client(app) as c:
        r = await c.post("/tools/shop/id", content=chunks())
    assert r.status_code == 413


async def test_empty_body_means_no_arguments(client):
    r = await client.post("/tools/shop/id")
    assert r.json()["body"] == {"id": 7}


async def test_typed_routes_serve_and_are_documented(client):
    r = await client.post("/api/weather_now/current", json={"city": "Oslo"})
    assert r.json() == OSLO
    spec = (await client.get("/openapi.json")).json()
    op = spec["paths"]["/api/weather_now/get_2_day_outlook"]["post"]
    assert op["summary"] == "Weather Now / 2-Day Outlook"
    schema = spec["paths"]["/api/weather_now/current"]["post"]["requestBody"]["content"]
    assert schema["application/json"]["schema"]["required"] == ["city"]


async def test_occurrences_count_per_session(client):
    async def status(session):
        r = await client.post(
            "/tools/shop/order status", json={"order_id": "A1"}, headers={SESSION_HEADER: session}
        )
        return r.json()["body"]["status"], r.headers["X-Sandbox-Occurrence"]

    assert await status("ep1") == ("pending", "1")
    assert await status("ep2") == ("pending", "1")  # two agents, same call, same answer
    assert await status("ep1") == ("shipped", "2")
    assert await status("ep1") == ("shipped", "3")
    reset = await client.post("/reset", headers={SESSION_HEADER: "ep1"})
    assert reset.json() == {"reset_scopes": 1}
    assert await status("ep1") == ("pending", "1")


async def test_task_faults_apply_to_their_scenario_only(client):
    headers = {SCENARIO_HEADER: "order-twice"}
    r = await client.post("/tools/shop/order status", json={"order_id": "A1"}, headers=headers)
    assert r.status_code == 500
    assert r.headers[PROVENANCE_HEADER] == "fault:http_500"
    assert r.json()["code"] == "fault"
    r = await client.post("/tools/shop/order status", json={"order_id": "A1"})
    assert r.json()["body"] == {"status": "pending"}


@pytest.mark.parametrize(
    ("kind", "status", "content"),
    [
        ("http_500", 500, None),
        ("rate_limit_429", 429, None),
        ("timeout", 504, None),
        ("empty_body", 200, b""),
    ],
)
async def test_fault_kinds_from_header(client, kind, status, content):
    headers = {"X-Sandbox-Faults": json.dumps({"rate": 1.0, "kinds": [kind]})}
    r = await client.post("/tools/shop/id", json={}, headers=headers)
    assert r.status_code == status
    assert r.headers[PROVENANCE_HEADER] == f"fault:{kind}"
    if content is not None:
        assert r.content == content
    if kind == "rate_limit_429":
        assert r.headers["Retry-After"] == "1"


async def test_malformed_body_fault_is_not_json(client):
    headers = {"X-Sandbox-Faults": '{"rate": 1, "kinds": ["malformed_body"]}'}
    r = await client.post("/tools/shop/id", json={}, headers=headers)
    assert r.status_code == 200
    with pytest.raises(ValueError):
        json.loads(r.content)


async def test_bad_fault_header_is_400(client):
    r = await client.post("/tools/shop/id", json={}, headers={"X-Sandbox-Faults": '{"rate": 5}'})
    assert r.status_code == 400
    assert r.json()["code"] == "bad_fault_header"


async def test_app_fault_rate_is_deterministic_and_retry_can_succeed(suite):
    cfg = FaultConfig(rate=0.5, seed=11)

    async def run():
        seen = []
        async with in_process_client(create_app(suite, fault=cfg)) as c:
            for city in ["Oslo", "Paris", "Parma", "Oslo", "Oslo", "Oslo", "Oslo", "Oslo"]:
                r = await c.post("/tools/Weather Now/current", json={"city": city})
                seen.append(r.headers[PROVENANCE_HEADER])
        return seen

    first = await run()
    assert first == await run()
    assert "hit" in first and any(p.startswith("fault:") for p in first)


async def test_scenario_faults_registry_overrides_task_faults(suite):
    app = create_app(suite, scenario_faults={"order-twice": FaultConfig(rate=0.0)})
    async with in_process_client(app) as c:
        r = await c.post(
            "/tools/shop/order status",
            json={"order_id": "A1"},
            headers={SCENARIO_HEADER: "order-twice"},
        )
    assert r.headers[PROVENANCE_HEADER] == "hit"


async def test_virtual_route_is_stabletoolbench_compatible(client):
    payload = {
        "category": "Weather",
        "tool_name": "weather_now",
        "api_name": "current",
        "tool_input": '{"city": "Oslo"}',
        "strip": "",
        "toolbench_key": "",
    }
    r = await client.post("/virtual", json=payload)
    assert r.status_code == 200
    assert r.json() == {"error": "", "response": {"temp_c": 3, "sky": "snow"}}
    by_function = {"tool_name": "", "api_name": "is_id_for_shop", "tool_input": {}}
    assert (await client.post("/virtual", json=by_function)).json() == {
        "error": "",
        "response": {"id": 7},
    }
    recorded_error = dict(payload, tool_input={"city": "Atlantis"})
    assert (await client.post("/virtual", json=recorded_error)).json() == {
        "error": "city not found",
        "response": "",
    }


@pytest.mark.parametrize(
    ("payload", "status"),
    [
        ({"tool_name": "weather_now", "api_name": "nope", "tool_input": {}}, 404),
        # tool_input that is not a JSON object: 200 and an error, as StableToolBench answers
        ({"tool_name": "weather_now", "api_name": "current", "tool_input": "{oops"}, 200),
        ({"tool_name": "weather_now", "api_name": "current", "tool_input": "[1]"}, 200),
        ({"tool_name": "weather_now", "api_name": "current", "tool_input": {}}, 422),
        ({"tool_name": 3, "api_name": "current"}, 422),
        ({"api_name": None}, 422),
        ({"tool_name": "", "api_name": "", "tool_input": {}}, 422),  # minLength 1 in its schema
    ],
)
async def test_virtual_bad_input(client, payload, status):
    r = await client.post("/virtual", json=payload)
    assert r.status_code == status
    assert set(r.json()) >= {"error", "response"}
    assert r.json()["error"]


async def test_virtual_miss(client):
    payload = {"tool_name": "Weather Now", "api_name": "current", "tool_input": {"city": "Rome"}}
    r = await client.post("/virtual", json=payload)
    assert r.status_code == 200
    assert r.headers[PROVENANCE_HEADER] == "miss"
    assert r.json()["error"].startswith("no recording")


async def test_meta_routes_and_stats(client):
    await client.post("/tools/Weather Now/current", json={"city": "Oslo"})
    await client.post("/tools/Weather Now/current", json={"city": "Lima"})
    await client.post("/tools/nope/nope", json={})
    await client.post("/tools/shop/id", content=b"{")
    health = (await client.get("/health")).json()
    assert health["status"] == "ok" and health["recordings"] == 8 and health["apis"] == 4
    tools = (await client.get("/tools")).json()
    assert [t["name"] for t in tools] == ["Weather Now", "shop"]
    assert tools[1]["apis"][1]["function_name"] == "is_id_for_shop"
    stats = (await client.get("/stats")).json()
    assert stats["apis"]["Weather Now/current"] == {"hit": 1, "miss": 1}
    assert stats["totals"] == {"bad_request": 1, "hit": 1, "miss": 1, "unknown": 1}


def test_factory_rejects_inconsistent_settings(suite):
    with pytest.raises(MockToolsError, match="unknown miss policy"):
        create_app(suite, miss_policy="guess")
    with pytest.raises(MockToolsError, match="simulator"):
        create_app(suite, miss_policy="simulate")
    with pytest.raises(MockToolsError, match="upstream_url"):
        create_app(suite, miss_policy="upstream")


async def test_a_schema_taking_raw_arguments_is_neither_checked_nor_canonicalised(suite):
    """BFCL's functions (``RAW_ARGUMENTS``): arguments that fail the schema reach the tool as
    the caller wrote them, and are looked up by that text."""
    from mock_tools.names import RAW_ARGUMENTS

    api = suite.apis[("Weather Now", "current")]
    raw = api.model_copy(update={"parameters": {**api.parameters, RAW_ARGUMENTS: True}})
    suite.apis[("Weather Now", "current")] = raw
    async with in_process_client(create_app(suite)) as c:
        r = await c.post("/tools/Weather Now/current", json={"units": "kelvin", "days": 0})
        assert r.status_code == 200 and r.json()["code"] == "no_recording"
        spaced = await c.post("/tools/Weather Now/current", json={"city": " Oslo "})
        assert spaced.json()["code"] == "no_recording"  # " Oslo " is not "Oslo" here
