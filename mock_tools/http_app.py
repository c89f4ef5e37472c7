"""The HTTP transport: ``create_app(suite)`` serves a ``MockToolService`` with FastAPI.

Routes
    POST /tools/{tool}/{api}    native route; the JSON body is the arguments object
    POST /api/<tool>/<api>      one typed route per API (slugs), documented in /openapi.json
    POST /virtual               StableToolBench-compatible ({category, tool_name, api_name,
                                tool_input, ...} -> {"error": str, "response": ...})
    GET  /health, /tools, /stats;  POST /reset (occurrence counters)
    /mcp                        with ``mcp=True``: the MCP transport (``mock_tools.mcp_server``)

Native answers are ``{"ok", "body", "error", "provenance"}`` (plus ``code`` on errors). A recorded
error (``ok: false``) is the tool's real behaviour and comes with HTTP 200. A **miss** under the
``error`` policy is also HTTP 200 with ``ok: false``, ``code: "no_recording"`` and provenance
``miss``: the API exists, nothing was recorded for these arguments. That is distinct from an unknown
API (HTTP 404, ``code: "unknown_api"``). Bad input: 400 malformed JSON, 413 body too large,
422 schema violations or a non-object body. Injected faults answer with their own status.

Every tool-call answer carries ``X-Sandbox-Provenance`` (``hit | miss | nearest | simulated |
upstream | fault:<kind> | unknown | invalid | bad_request``) and is counted in ``/stats``.

Request headers: ``X-Sandbox-Session`` scopes occurrence counting (else ``X-Sandbox-Scenario``,
else one shared scope); ``X-Sandbox-Scenario`` also picks per-scenario faults and seeds the fault
hash; ``X-Sandbox-Faults`` overrides the fault config with a JSON ``FaultConfig``;
``X-Sandbox-Recordings`` names the recordings scope whose scoped recordings answer first. Scenario,
session and recordings values are percent-encoded UTF-8 (``header_value``), so any task id can
travel in them.

This module only parses requests and renders answers: the call path is the service's
(``mock_tools.service``). May import the service, miss, faults and suite modules.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI, Request
from fastapi import Response as HTTPResponse
from fastapi.openapi.utils import get_openapi

from mock_tools.miss import MissPolicy
from mock_tools.models import FaultConfig, Response
from mock_tools.names import function_name, standardize
from mock_tools.overlay import OverlayStore
from mock_tools.render import dumps, native_payload, reject_payload, virtual_payload
from mock_tools.service import CallContext, MockToolService, Outcome, Rejected, create_service
from mock_tools.suite import Suite

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "FAULTS_HEADER",
    "OCCURRENCE_HEADER",
    "PROVENANCE_HEADER",
    "RECORDINGS_HEADER",
    "SCENARIO_HEADER",
    "SESSION_HEADER",
    "create_app",
    "header_value",
    "http_app",
]

PROVENANCE_HEADER = "X-Sandbox-Provenance"
OCCURRENCE_HEADER = "X-Sandbox-Occurrence"
SCENARIO_HEADER = "X-Sandbox-Scenario"
SESSION_HEADER = "X-Sandbox-Session"
FAULTS_HEADER = "X-Sandbox-Faults"
RECORDINGS_HEADER = "X-Sandbox-Recordings"
DEFAULT_MAX_BODY_BYTES = 1_000_000
_OBJECT_BODY = {"type": "object", "additionalProperties": True}


# ---------------------------------------------------------------------------------------- HTTP


async def _read_json(request: Request, limit: int) -> Any:
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise Rejected(413, "body_too_large", f"request body over {limit} bytes")
    if length is not None and length.isdigit():
        raw = await request.body()
    else:
        chunks, size = [], 0
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise Rejected(413, "body_too_large", f"request body over {limit} bytes")
            chunks.append(chunk)
        raw = b"".join(chunks)
    if len(raw) > limit:
        raise Rejected(413, "body_too_large", f"request body over {limit} bytes")
    if not raw.strip():
        return {}
    try:
        return json.loads(raw)
    except (ValueError, RecursionError) as e:
        raise Rejected(400, "malformed_json", f"request body is not valid JSON: {e}") from None


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Rejected(422, "not_an_object", f"{what} must be a JSON object")
    return value


def header_value(text: str) -> str:
    """``text`` as an HTTP header value: percent-encoded UTF-8, so any task id travels (the
    server decodes ``X-Sandbox-Scenario`` and ``X-Sandbox-Session``)."""
    return quote(text, safe="")


def _header(request: Request, name: str) -> str | None:
    value = request.headers.get(name)
    return None if value is None else unquote(value)


def _context(request: Request) -> CallContext:
    h = request.headers
    scenario = _header(request, SCENARIO_HEADER)
    scope = _header(request, SESSION_HEADER) or scenario or ""
    return CallContext.parse(
        scenario, scope, h.get(FAULTS_HEADER), _header(request, RECORDINGS_HEADER)
    )


def _reply(
    payload: Any, status: int, provenance: str, extra: Mapping[str, str] | None = None
) -> HTTPResponse:
    body = dumps(payload)
    headers = {PROVENANCE_HEADER: provenance, **(extra or {})}
    return HTTPResponse(body, status, headers, media_type="application/json")


class _HitBodies:
    """Rendered bodies of recorded hits, made once per recording and route shape.

    A recording never changes while it is served, so its answer is serialised once. Entries are
    keyed by the recorded ``Response`` object (which the store keeps alive) and checked by
    identity, so a reused ``id`` can never serve a stale body.
    """

    def __init__(self, limit: int = 100_000) -> None:
        self._bodies: dict[tuple[int, bool], tuple[Response, bytes]] = {}
        self._limit = limit

    def get(self, o: Outcome, virtual: bool) -> bytes:
        key = (id(o.response), virtual)
        cached = self._bodies.get(key)
        if cached is not None and cached[0] is o.response:
            return cached[1]
        body = dumps(virtual_payload(o) if virtual else native_payload(o))
        if len(self._bodies) >= self._limit:
            self._bodies.clear()
        self._bodies[key] = (o.response, body)
        return body


def _render(o: Outcome, virtual: bool, hits: _HitBodies) -> HTTPResponse:
    headers = {OCCURRENCE_HEADER: str(o.occurrence), **(o.headers or {})}
    if o.raw is not None:
        headers[PROVENANCE_HEADER] = o.provenance
        return HTTPResponse(o.raw, o.status, headers, media_type="application/json")
    if o.provenance == "hit" and o.code is None:
        headers[PROVENANCE_HEADER] = o.provenance
        return HTTPResponse(hits.get(o, virtual), o.status, headers, media_type="application/json")
    payload = virtual_payload(o) if virtual else native_payload(o)
    return _reply(payload, o.status, o.provenance, headers)


def _reject(e: Rejected, virtual: bool) -> HTTPResponse:
    return _reply(reject_payload(e, virtual), e.status, e.provenance)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", standardize(name)).strip("_") or "x"


def create_app(
    suite: Suite,
    *,
    miss_policy: str | MissPolicy = "error",
    fault: FaultConfig | None = None,
    scenario_faults: Mapping[str, FaultConfig] | None = None,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    record_to: str | Path | None = None,
    overlay: str | Path | OverlayStore | None = None,
    mcp: bool = False,
    host: str = "127.0.0.1",
    **policy_settings: Any,
) -> FastAPI:
    """A FastAPI app serving ``suite``'s recordings deterministically.

    The service's settings are ``create_service``'s (the miss policy by object or by name, with
    ``simulator``, ``upstream`` / ``upstream_url`` or ``nearest_threshold`` for a name; faults;
    where responses made at run time go); ``max_body_bytes`` caps request bodies; ``mcp`` also
    serves the suite as MCP tools at ``/mcp`` (``http_app``).
    """
    service = create_service(
        suite,
        miss_policy=miss_policy,
        fault=fault,
        scenario_faults=scenario_faults,
        record_to=record_to,
        overlay=overlay,
        **policy_settings,
    )
    return http_app(service, max_body_bytes=max_body_bytes, mcp=mcp, host=host)


def http_app(
    service: MockToolService,
    *,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    mcp: bool = False,
    host: str = "127.0.0.1",
) -> FastAPI:
    """The routes over an existing service (``create_app`` builds the service too).

    ``mcp`` adds the MCP transport at ``/mcp`` (``mock_tools.mcp_server.mcp_route``; DNS-rebinding
    protection when ``host`` is a loopback address) and runs its session manager in the app's
    lifespan, so the MCP SDK is imported only by apps that serve it."""
    suite = service.suite
    manager: Any = None
    mcp_routes = []
    if mcp:
        from mock_tools.mcp_server import mcp_route  # the MCP SDK only for apps that serve MCP

        route, manager = mcp_route(service, host=host)
        mcp_routes.append(route)

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        try:
            if manager is None:
                yield
            else:
                async with manager.run():
                    yield
        finally:
            await service.aclose()

    app = FastAPI(
        title=f"mock tools: {suite.name}",
        version=suite.meta.version,
        description=suite.meta.description or "Deterministic mock tool server (agent-sandbox).",
        lifespan=lifespan,
    )
    app.state.service = service
    app.router.routes.extend(mcp_routes)

    hit_bodies = _HitBodies()

    async def handle(request: Request, tool: str, api: str, virtual: bool = False) -> HTTPResponse:
        try:
            ctx = _context(request)
            if virtual:
                payload = _object(await _read_json(request, max_body_bytes), "request body")
                tool, api = _virtual_target(payload)
                tool, api = service.resolve(tool, api)
                args = _tool_input(payload.get("tool_input"))
            else:
                tool, api = service.resolve(tool, api)
                args = _object(await _read_json(request, max_body_bytes), "arguments")
        except Rejected as e:
            service.stats.count(e.provenance)
            return _reject(e, virtual)
        try:
            _, _, outcome = await service.handle(tool, api, args, ctx)
        except Rejected as e:
            return _reject(e, virtual)
        return _render(outcome, virtual, hit_bodies)

    body_doc = {
        "parameters": [
            {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
            for name in ("tool", "api")
        ],
        "requestBody": {"content": {"application/json": {"schema": _OBJECT_BODY}}},
    }

    @app.post("/tools/{tool}/{api}", tags=["native"], openapi_extra=body_doc)
    async def call_tool(request: Request) -> HTTPResponse:
        """Call an API with the JSON body as its arguments (any spelling of the names)."""
        params = request.path_params
        return await handle(request, params["tool"], params["api"])

    virtual_doc = {"requestBody": {"content": {"application/json": {"schema": _VIRTUAL_SCHEMA}}}}

    @app.post("/virtual", tags=["stabletoolbench"], openapi_extra=virtual_doc)
    async def virtual(request: Request) -> HTTPResponse:
        """StableToolBench-compatible endpoint: answers ``{"error": str, "response": ...}``."""
        return await handle(request, "", "", virtual=True)

    @app.get("/health", tags=["meta"])
    async def health() -> dict[str, Any]:
        return service.health()

    catalog = _catalog(suite)

    @app.get("/tools", tags=["meta"])
    async def tools() -> list[dict[str, Any]]:
        return catalog

    @app.get("/stats", tags=["meta"])
    async def stats() -> dict[str, Any]:
        return {**service.stats.to_json(), "recordings": len(service.store)}

    @app.post("/reset", tags=["meta"])
    async def reset(request: Request) -> dict[str, int]:
        """Forget occurrence counts of the header's session/scenario scope (all without one)."""
        scope = _header(request, SESSION_HEADER) or _header(request, SCENARIO_HEADER)
        return {"reset_scopes": service.reset(scope)}

    typed = _typed_paths(suite)
    by_path = {path: pair for pair, path in typed.items()}

    @app.post("/api/{tool_slug}/{api_slug}", include_in_schema=False)
    async def call_typed(request: Request) -> HTTPResponse:
        """One documented route per API, dispatched here by a dict lookup (O(1) at any scale)."""
        params = request.path_params
        pair = by_path.get(f"/api/{params['tool_slug']}/{params['api_slug']}")
        if pair is None:
            return await handle(request, params["tool_slug"], params["api_slug"])
        return await handle(request, *pair)

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            schema["paths"].update(_typed_docs(suite, typed))
            app.openapi_schema = schema
        return app.openapi_schema

    app.openapi = openapi  # type: ignore[method-assign]
    return app


def _typed_docs(suite: Suite, typed: dict[tuple[str, str], str]) -> dict[str, Any]:
    """OpenAPI path items of the typed routes: the API's JSON Schema is the request body."""
    out: dict[str, Any] = {}
    for (tool, api), path in typed.items():
        spec = suite.apis[(tool, api)]
        operation: dict[str, Any] = {
            "tags": [tool],
            "summary": f"{tool} / {api}",
            "operationId": path.strip("/").replace("/", "__"),
            "requestBody": {"content": {"application/json": {"schema": spec.parameters}}},
            "responses": {
                "200": {"description": "The recorded answer: ok, body, error, provenance."},
                "422": {"description": "The arguments do not match the schema."},
            },
        }
        if spec.description:
            operation["description"] = spec.description
        out[path] = {"post": operation}
    return out


def _typed_paths(suite: Suite) -> dict[tuple[str, str], str]:
    """``/api/<tool slug>/<api slug>`` per API, made unique with a numeric suffix."""
    out: dict[tuple[str, str], str] = {}
    used: set[str] = set()
    for tool, api in suite.apis:
        base = f"/api/{_slug(tool)}/{_slug(api)}"
        path, n = base, 1
        while path in used:
            n += 1
            path = f"{base}_{n}"
        used.add(path)
        out[(tool, api)] = path
    return out


def _catalog(suite: Suite) -> list[dict[str, Any]]:
    paths = _typed_paths(suite)
    return [
        {
            "name": t.name,
            "category": t.category,
            "description": t.description,
            "apis": [
                {
                    "name": a.name,
                    "description": a.description,
                    "parameters": a.parameters,
                    "function_name": function_name(t.name, a.name),
                    "path": paths[(t.name, a.name)],
                }
                for a in t.apis
            ],
        }
        for t in suite.tools.values()
    ]


_VIRTUAL_SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"type": "string"},
        "tool_name": {"type": "string"},
        "api_name": {"type": "string"},
        "tool_input": {"anyOf": [{"type": "object"}, {"type": "string"}]},
        "strip": {"type": "string"},
        "toolbench_key": {"type": "string"},
    },
    "required": ["tool_name", "api_name"],
}


def _virtual_target(payload: dict[str, Any]) -> tuple[str, str]:
    tool, api = payload.get("tool_name"), payload.get("api_name")
    if not isinstance(api, str) or not api or (tool is not None and not isinstance(tool, str)):
        raise Rejected(422, "invalid_request", "tool_name and api_name must be strings")
    return tool or "", api


def _tool_input(value: Any) -> dict[str, Any]:
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):
            raise Rejected(400, "malformed_json", "tool_input is not valid JSON") from None
    return _object(value, "tool_input")
