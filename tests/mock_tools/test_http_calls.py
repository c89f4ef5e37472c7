"""The lean call endpoints (mock_tools.http_calls): the same answers as ever, new 4xx for bodies
that are not JSON or nest too deep, answers kept per recorded place (never mixed across
occurrences or recordings scopes), and their OpenAPI documentation."""

import json

import pytest
from fastapi import FastAPI

from mock_tools import (
    OCCURRENCE_HEADER,
    PROVENANCE_HEADER,
    RECORDINGS_HEADER,
    SESSION_HEADER,
    RecordingStore,
    Response,
    create_app,
    header_value,
    in_process_client,
    load_suite,
)
from mock_tools.json_body import MAX_DEPTH

VIRTUAL = {"category": "Weather", "tool_name": "Weather Now", "api_name": "current"}


@pytest.fixture
async def client(suite):
    async with in_process_client(create_app(suite)) as c:
        yield c


@pytest.mark.parametrize("path", ["/tools/Weather Now/current", "/api/weather_now/current"])
async def test_a_body_declared_as_another_media_type_is_415(client, path):
    r = await client.post(path, content=b"<city>Oslo</city>", headers={"content-type": "text/xml"})
    assert r.status_code == 415
    assert r.json()["code"] == "unsupported_media_type"
    assert r.headers[PROVENANCE_HEADER] == "bad_request"
    assert (await client.get("/stats")).json()["totals"] == {"bad_request": 1}


async def test_virtual_415_keeps_its_envelope(client):
    r = await client.post("/virtual", content=b"a=b", headers={"content-type": "multipart/mixed"})
    assert r.status_code == 415
    assert set(r.json()) >= {"error", "response", "code"}


@pytest.mark.parametrize(
    "content_type", [None, "application/json", "text/plain", "application/x-www-form-urlencoded"]
)
async def test_json_under_any_usual_content_type_is_a_hit(client, content_type):
    headers = {} if content_type is None else {"content-type": content_type}
    r = await client.post("/tools/Weather Now/current", content=b'{"city":"Oslo"}', headers=headers)
    assert r.status_code == 200 and r.headers[PROVENANCE_HEADER] == "hit"


async def test_nesting_past_the_limit_is_422_on_every_call_route(client):
    deep = {"x": 1}
    for _ in range(MAX_DEPTH + 1):
        deep = {"x": deep}
    native = await client.post("/tools/Weather Now/current", json={"city": deep})
    virtual = await client.post("/virtual", json={**VIRTUAL, "tool_input": {"city": deep}})
    as_text = await client.post("/virtual", json={**VIRTUAL, "tool_input": json.dumps(deep)})
    for r in (native, virtual, as_text):
        assert r.status_code == 422 and r.json()["code"] == "too_deep"


async def test_invalid_utf8_is_400(client):
    r = await client.post("/tools/Weather Now/current", content=b'{"city": "Os\xc3lo"}')
    assert r.status_code == 400 and r.json()["code"] == "malformed_json"


async def test_the_same_bytes_again_follow_occurrences(client):
    """The prepared call and the encoded answer are kept, the occurrence still counts."""
    body = b'{"order_id": "A1"}'
    seen = []
    for _ in range(4):
        r = await client.post("/tools/shop/order status", content=body)
        seen.append((r.json()["body"]["status"], r.headers[OCCURRENCE_HEADER]))
    assert seen == [("pending", "1"), ("shipped", "2"), ("shipped", "3"), ("shipped", "4")]
    other = {SESSION_HEADER: header_value("épisode/1 ✓")}
    r = await client.post("/tools/shop/order status", content=body, headers=other)
    assert (r.json()["body"]["status"], r.headers[OCCURRENCE_HEADER]) == ("pending", "1")


async def test_virtual_and_native_answers_of_one_recording_are_kept_apart(client):
    for _ in range(2):
        native = await client.post("/tools/Weather Now/current", json={"city": "Oslo"})
        virtual = await client.post("/virtual", json={**VIRTUAL, "tool_input": {"city": "Oslo"}})
        assert native.json()["provenance"] == "hit"
        assert virtual.json() == {"error": "", "response": {"temp_c": 3, "sky": "snow"}}


async def test_scoped_and_unscoped_answers_never_mix(make_suite):
    recordings = [
        {"tool": "shop", "api": "id", "args": {}, "response": {"ok": True, "body": {"id": 7}}},
        {
            "tool": "shop",
            "api": "id",
            "args": {},
            "response": {"ok": True, "body": {"id": 8}},
            "scope": "ep/1",
        },
    ]
    app = create_app(load_suite(make_suite(recordings=recordings)))
    scoped = {RECORDINGS_HEADER: header_value("ep/1")}
    async with in_process_client(app) as c:
        for _ in range(2):
            assert (await c.post("/tools/shop/id", content=b"{}")).json()["body"] == {"id": 7}
            r = await c.post("/tools/shop/id", content=b"{}", headers=scoped)
            assert r.json()["body"] == {"id": 8}
            r = await c.post("/tools/shop/id", headers={RECORDINGS_HEADER: "other"})
            assert r.json()["body"] == {"id": 7}


async def test_other_methods_on_call_routes_are_405(client):
    assert (await client.get("/virtual")).status_code == 405
    assert (await client.get("/tools/shop/id")).status_code == 405


async def test_call_routes_are_documented(client):
    spec = (await client.get("/openapi.json")).json()
    native = spec["paths"]["/tools/{tool}/{api}"]["post"]
    assert [p["name"] for p in native["parameters"]] == ["tool", "api"]
    assert native["requestBody"]["content"]["application/json"]["schema"]["type"] == "object"
    assert {"200", "404", "413", "415", "422"} <= set(native["responses"])
    virtual = spec["paths"]["/virtual"]["post"]
    schema = virtual["requestBody"]["content"]["application/json"]["schema"]
    assert schema["required"] == ["tool_name", "api_name"]
    assert virtual["operationId"] == "virtual_virtual_post"
    assert "/api/weather_now/current" in spec["paths"]


def test_the_app_is_fastapi_with_the_call_routes_first(suite):
    app = create_app(suite)
    assert isinstance(app, FastAPI)
    paths = [getattr(r, "path", None) for r in app.router.routes[:3]]
    assert paths == ["/virtual", "/tools/{tool}/{api}", "/api/{tool_slug}/{api_slug}"]


def test_locate_names_the_place_a_response_is_recorded():
    store = RecordingStore()
    store.add_keyed("t", "a", "{}", Response(ok=True, body=1), 1)
    store.add_keyed("t", "a", "{}", Response(ok=True, body=2), 2)
    store.add_keyed("t", "a", "k", Response(ok=True, body=3))
    store.add_keyed("t", "a", "k", Response(ok=True, body=4), scope="s")
    store.add_keyed("t", "a", "k", Response(ok=True, body=5), history="ab")
    places = {n: store.locate("t", "a", "{}", n) for n in (1, 2, 3, 9)}
    assert {n: (r.body, p) for n, (r, p) in places.items() if r is not None} == {
        1: (1, (None, "t", "a", "{}", 1, None)),
        2: (2, (None, "t", "a", "{}", 2, None)),
        3: (2, (None, "t", "a", "{}", 2, None)),
        9: (2, (None, "t", "a", "{}", 2, None)),
    }
    assert store.locate("t", "a", "k", 5)[1] == (None, "t", "a", "k", 0, None)
    assert store.locate("t", "a", "k", 5, scope="s")[1] == ("s", "t", "a", "k", 0, None)
    assert store.locate("t", "a", "k", scope="elsewhere")[1] == (None, "t", "a", "k", 0, None)
    # a place after a write history names it: the same call there is another answer
    found = store.locate("t", "a", "k", history="ab")
    assert found is not None and found[0].body == 5
    assert found[1] == (None, "t", "a", "k", 0, "ab")
    assert store.locate("t", "a", "missing") is None


async def test_the_first_of_repeated_headers_counts_as_before(client):
    body = b'{"order_id": "A1"}'
    first = [(SESSION_HEADER, "s1"), (SESSION_HEADER, "s2")]
    assert (await client.post("/tools/shop/order status", content=body, headers=first)).json()[
        "body"
    ] == {"status": "pending"}
    r = await client.post("/tools/shop/order status", content=body, headers={SESSION_HEADER: "s1"})
    assert r.headers[OCCURRENCE_HEADER] == "2"
    r = await client.post("/tools/shop/order status", content=body, headers={SESSION_HEADER: "s2"})
    assert r.headers[OCCURRENCE_HEADER] == "1"
