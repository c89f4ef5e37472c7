"""Helpers shared by the interop tests: serve a suite in process and call every API once."""

from __future__ import annotations

from typing import Any

import httpx

from mock_tools.http_app import create_app
from mock_tools.suite import Suite

_PLACEHOLDER = {
    "string": "x",
    "number": 1,
    "integer": 1,
    "boolean": True,
    "array": [],
    "object": {},
}


def valid_args(schema: dict[str, Any]) -> dict[str, Any]:
    """Arguments that satisfy the required part of a schema (examples first)."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for name in schema.get("required") or []:
        prop = props.get(name) or {}
        examples = prop.get("examples") or []
        kind = prop.get("type", "string")
        out[name] = examples[0] if examples else _PLACEHOLDER.get(kind, "x")
        if isinstance(prop.get("enum"), list) and prop["enum"]:
            out[name] = prop["enum"][0]
    return out


async def call_every_api(suite: Suite) -> dict[str, int]:
    """POST every API once on its typed route, in process, with the ``error`` miss policy.

    Returns counts of outcomes: ``miss`` (a structured no-recording answer) or ``status:<code>``.
    """
    app = create_app(suite, miss_policy="error")
    outcomes: dict[str, int] = {}
    transport = httpx.ASGITransport(app=app)
    async with (
        app.router.lifespan_context(app),
        httpx.AsyncClient(transport=transport, base_url="http://t") as client,
    ):
        openapi = (await client.get("/openapi.json")).json()
        catalog = (await client.get("/tools")).json()
        assert len(openapi["paths"]) >= len(suite.apis)
        for tool in catalog:
            for api in tool["apis"]:
                assert api["path"] in openapi["paths"]
                r = await client.post(api["path"], json=valid_args(api["parameters"]))
                body = r.json()
                ok = r.status_code == 200 and body.get("code") == "no_recording"
                key = "miss" if ok else f"status:{r.status_code}"
                outcomes[key] = outcomes.get(key, 0) + 1
    return outcomes
