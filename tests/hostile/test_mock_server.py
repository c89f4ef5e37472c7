"""Hostile requests to the mock tool server's call routes (hardening issue #14, items 17 and 20):
deep nesting and invalid Unicode are 4xx and leave the keep-alive connection usable, every 4xx
of a call route is documented, and no body or header makes a call route answer 5xx."""

from __future__ import annotations

import functools
import json
import socket
from typing import Any

import httpx
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mock_tools import PROVENANCE_HEADER, create_app, in_process_client, load_suite
from mock_tools.json_body import MAX_DEPTH
from tests.hostile.conftest import MINI, serving


@functools.lru_cache(maxsize=1)
def _suite() -> Any:
    """The mini suite, loaded once: each load keeps its recording index's files open for as long
    as an app of it lives, and FastAPI's callable caches keep up to thousands of apps' endpoints
    (and so their suites) alive, so a suite per hypothesis example held ~900 descriptors open
    for the rest of the test session (enough to push later tests' pipes past select()'s 1024)."""
    return load_suite(MINI)


def _first_call(suite: Any) -> tuple[str, str, dict[str, Any]]:
    rec = suite.recordings[0]
    return rec.tool, rec.api, rec.args


def _exchange(sock: socket.socket, request: bytes) -> tuple[int, bytes]:
    """Send one request on an open connection and read one whole response."""
    sock.sendall(request)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")
    length = next(
        int(line.split(b":", 1)[1]) for line in lines if line.lower().startswith(b"content-length:")
    )
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk, "the server closed the connection mid-body"
        rest += chunk
    return int(lines[0].split()[1]), rest[:length]


def _post(path: str, body: bytes, content_type: str = "application/json") -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


def test_17_deep_nesting_and_lone_surrogates_are_4xx_and_the_connection_stays_usable() -> None:
    suite = _suite()
    tool, api, args = _first_call(suite)
    path = httpx.URL(f"http://x/tools/{tool}/{api}").raw_path.decode()
    good = _post(path, json.dumps(args).encode())
    bad = [
        (_post(path, b"[" * 800 + b"]" * 800), 422),
        (_post(path, b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1)), 422),
        (_post(path, b'{"q": "\\ud800"}'), 400),
        (_post(path, b'{"q": "\xed\xa0\x80"}'), 400),
        (
            _post(
                "/virtual",
                json.dumps(
                    {"tool_name": tool, "api_name": api, "tool_input": "[" * 900 + "]" * 900}
                ).encode(),
            ),
            422,
        ),
        (_post(path, b"<q/>", "application/xml"), 415),
    ]
    with serving(create_app(suite)) as base:
        port = int(base.rsplit(":", 1)[1])
        with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
            assert _exchange(sock, good)[0] == 200
            for request, status in bad:
                assert _exchange(sock, request)[0] == status
                answered, body = _exchange(sock, good)  # the same connection, still usable
                assert answered == 200 and json.loads(body)["provenance"] == "hit"


def test_20_every_4xx_of_a_call_route_is_documented_and_413_415_are_answered() -> None:
    app = create_app(_suite(), max_body_bytes=1000)
    with serving(app) as base, httpx.Client(base_url=base, timeout=10) as client:
        spec = client.get("/openapi.json").json()
        calls = {
            p: item["post"] for p, item in spec["paths"].items() if p != "/reset" and "post" in item
        }
        assert "/virtual" in calls and "/tools/{tool}/{api}" in calls
        for path, operation in calls.items():
            assert {"400", "413", "415", "422"} <= set(operation["responses"]), path
        assert spec["paths"]["/virtual"]["post"]["requestBody"]["required"] is True
        # a typed route's body is required exactly when its API has required arguments (an
        # absent body is the empty object, which then fails validation with 422)
        suite = _suite()
        for path, operation in calls.items():
            if not path.startswith("/api/"):
                continue
            schema = operation["requestBody"]["content"]["application/json"]["schema"]
            assert operation["requestBody"]["required"] is bool(schema.get("required")), path
            if schema.get("required"):
                assert client.post(path).status_code == 422, path
        assert any(spec.parameters.get("required") for spec in suite.apis.values())
        big = client.post("/virtual", content=b" " * 1001)
        assert big.status_code == 413 and big.json()["code"] == "body_too_large"
        xml = client.post("/virtual", content=b"<a/>", headers={"content-type": "text/xml"})
        assert xml.status_code == 415 and xml.json()["code"] == "unsupported_media_type"


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_HEADER_TEXT = st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=40)


@st.composite
def _bodies(draw: st.DrawFn) -> bytes:
    kind = draw(st.sampled_from(["json", "binary", "nested", "virtual", "text"]))
    if kind == "binary":
        return draw(st.binary(max_size=300))
    if kind == "nested":
        depth = draw(st.integers(1, 3000))
        return draw(st.sampled_from([b"[", b'{"a":'])) * depth
    if kind == "text":
        return draw(st.text(max_size=100)).encode("utf-8", "surrogatepass")
    value = draw(_JSON)
    if kind == "virtual":
        value = {
            "tool_name": draw(st.one_of(st.text(max_size=30), _JSON)),
            "api_name": draw(st.one_of(st.text(max_size=30), _JSON)),
            "tool_input": draw(st.one_of(_JSON, _JSON.map(json.dumps))),
        }
    return json.dumps(value).encode()


@settings(max_examples=300, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    path=st.sampled_from(
        ["/virtual", "/tools/{tool}/{api}", "/api/{tool}/{api}", "/tools/x/{api}"]
    ),
    body=_bodies(),
    headers=st.dictionaries(
        st.sampled_from(
            [
                "content-type",
                "x-sandbox-scenario",
                "x-sandbox-session",
                "x-sandbox-faults",
                "x-sandbox-recordings",
            ]
        ),
        _HEADER_TEXT
        | st.sampled_from(["application/json", '{"rate": 1, "kinds": ["empty_body"]}', "%ff%00"]),
        max_size=4,
    ),
)
async def test_17_20_no_body_or_header_makes_a_call_route_answer_5xx(
    path: str, body: bytes, headers: dict[str, str]
) -> None:
    suite = _suite()
    tool, api, _ = _first_call(suite)
    url = path.format(tool=tool, api=api)
    async with in_process_client(create_app(suite)) as client:
        r = await client.post(url, content=body, headers=headers)
    injected = r.headers.get(PROVENANCE_HEADER, "").startswith("fault:")
    assert r.status_code < 500 or injected, (r.status_code, r.text[:300])
    if r.status_code >= 400:
        assert r.headers["content-type"] == "application/json"
        r.json()  # a structured error, never an HTML page or a traceback
