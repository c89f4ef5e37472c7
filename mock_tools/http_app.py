"""The HTTP transport: ``create_app(suite)`` serves a ``MockToolService`` with FastAPI.

Routes
    POST /tools/{tool}/{api}    native route; the JSON body is the arguments object
    POST /api/<tool>/<api>      one typed route per API (slugs), documented in /openapi.json
    POST /virtual               StableToolBench-compatible ({category, tool_name, api_name,
                                tool_input, ...} -> {"error": str, "response": ...})
    GET  /health, /tools, /stats;  POST /reset (occurrence counters, a world's session)
    /sessions...                a suite with a world: its sessions (``mock_tools.session_routes``)
    GET  /docs, /redoc          the API pages, their scripts served locally (``docs_pages``)
    /mcp                        with ``mcp=True``: the MCP transport (``mock_tools.mcp_server``)

Native answers are ``{"ok", "body", "error", "provenance"}`` (plus ``code`` on errors). A recorded
error (``ok: false``) is the tool's real behaviour and comes with HTTP 200. A **miss** under the
``error`` policy is also HTTP 200 with ``ok: false``, ``code: "no_recording"`` and provenance
``miss``: the API exists, nothing was recorded for these arguments. That is distinct from an unknown
API (HTTP 404, ``code: "unknown_api"``). Bad input: 400 malformed JSON (or text that is not
UTF-8), 413 body too large, 415 a body declared as another media type than JSON, 422 schema
violations, a non-object body or nesting deeper than 64 levels. Injected faults answer with their
own status.

``/virtual`` answers as StableToolBench's server does: a ``tool_input`` that is not a JSON object
gets 200 with ``{"error": <why>, "response": ""}``; ``tool_name`` may be ``<tool>_for_<category>``
and ``category`` picks among tools that share their ToolBench names. In a suite of ToolBench origin
(``SuiteMeta.origin``) arguments that fail the schema are not rejected on ``/virtual`` nor on the
native route: they are answered as an unrecorded call (the miss policy's answer, 200). The typed
routes keep validating strictly (422).

Every tool-call answer carries ``X-Sandbox-Provenance`` (``hit | miss | nearest | simulated |
upstream | fault:<kind> | unknown | invalid | bad_request``) and is counted in ``/stats``.

Request headers: ``X-Sandbox-Session`` scopes occurrence counting (else ``X-Sandbox-Scenario``,
else one shared scope); ``X-Sandbox-Scenario`` also picks per-scenario faults and seeds the fault
hash; ``X-Sandbox-Faults`` overrides the fault config with a JSON ``FaultConfig``;
``X-Sandbox-Recordings`` names the recordings scope whose scoped recordings answer first. Scenario,
session and recordings values are percent-encoded UTF-8 (``header_value``), so any task id can
travel in them.

The call routes are lean ASGI endpoints (``mock_tools.http_calls``) placed ahead of the FastAPI
routes, documented in ``/openapi.json`` all the same; this module builds the app, its meta routes
and the documentation. The call path is the service's (``mock_tools.service``). May import the
service, http_calls, docs_pages, miss, faults and suite modules.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

from fastapi import FastAPI, Request
from fastapi.openapi.utils import get_openapi
from starlette.routing import Route

from mock_tools.docs_pages import add_docs_pages
from mock_tools.http_calls import (
    BAD_INPUT_RESPONSES,
    FAULTS_HEADER,
    OCCURRENCE_HEADER,
    PROVENANCE_HEADER,
    RECORDINGS_HEADER,
    SCENARIO_HEADER,
    SESSION_HEADER,
    CallRoutes,
    call_docs,
    call_routes,
    match_call_route,
)
from mock_tools.miss import MissPolicy
from mock_tools.models import FaultConfig
from mock_tools.names import function_name, standardize
from mock_tools.overlay import OverlayStore
from mock_tools.service import MockToolService, create_service
from mock_tools.session_routes import add_session_routes
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

DEFAULT_MAX_BODY_BYTES = 1_000_000


# ---------------------------------------------------------------------------------------- HTTP


def header_value(text: str) -> str:
    """``text`` as an HTTP header value: percent-encoded UTF-8, so any task id travels (the
    server decodes ``X-Sandbox-Scenario`` and ``X-Sandbox-Session``)."""
    return quote(text, safe="")


def _header(request: Request, name: str) -> str | None:
    value = request.headers.get(name)
    return None if value is None else unquote(value)


def _slug(name: str) -> str:
    return re.sub(r"[^a-z0-9_]+", "_", standardize(name)).strip("_") or "x"


class MockToolsApp(FastAPI):
    """FastAPI whose call routes (``mock_tools.http_calls``) answer before its middleware stack.

    They stay first in ``router.routes`` too (so they are the routes of their paths however the
    app is entered); ``__call__`` only looks them up ahead of FastAPI's own dispatch, which costs
    more per request than the lookup itself. Middleware added to the app does not see them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.call_routes: list[Route] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            found = match_call_route(self.call_routes, scope)
            if found is not None:
                route, params = found
                scope["endpoint"] = route.endpoint
                scope["path_params"] = {**scope.get("path_params", {}), **params}
                await route.app(scope, receive, send)
                return
        await super().__call__(scope, receive, send)


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

    app = MockToolsApp(
        title=f"mock tools: {suite.name}",
        version=suite.meta.version,
        description=suite.meta.description or "Deterministic mock tool server (agent-sandbox).",
        lifespan=lifespan,
        docs_url=None,  # FastAPI's pages load their scripts from a CDN: ours work offline
        redoc_url=None,
    )
    add_docs_pages(app)
    app.state.service = service
    typed = _typed_paths(suite)
    calls = CallRoutes(
        service, max_body_bytes=max_body_bytes, typed={path: pair for pair, path in typed.items()}
    )
    # the lean call endpoints go first: they answer their paths before any FastAPI route
    app.call_routes = call_routes(calls)
    app.router.routes[:0] = [*app.call_routes, *mcp_routes]

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

    add_session_routes(app, service, max_body_bytes=max_body_bytes)

    @app.post("/reset", tags=["meta"])
    async def reset(request: Request) -> dict[str, int]:
        """Forget occurrence counts of the header's session/scenario scope (all without one)."""
        scope = _header(request, SESSION_HEADER) or _header(request, SCENARIO_HEADER)
        return {"reset_scopes": service.reset(scope)}

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            schema = get_openapi(
                title=app.title,
                version=app.version,
                description=app.description,
                routes=app.routes,
            )
            schema["paths"].update(call_docs())
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
            # an absent body is the empty object: required where the API has required arguments
            "requestBody": {
                "required": bool(spec.parameters.get("required")),
                "content": {"application/json": {"schema": spec.parameters}},
            },
            "responses": {
                "200": {"description": "The recorded answer: ok, body, error, provenance."},
                **BAD_INPUT_RESPONSES,
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
