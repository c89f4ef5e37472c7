"""The call routes as lean ASGI endpoints: ``POST /virtual``, ``/tools/{tool}/{api}`` and the
typed ``/api/{tool}/{api}`` routes.

They are Starlette routes placed first in the FastAPI app's router (``call_routes``), so a call
skips FastAPI's request and response objects: the headers are read from the ASGI scope once, the
body is read and decoded by ``mock_tools.json_body`` (orjson), and the service answers in its
three steps (``prepare``, ``admit``, ``answer``). What stays the same for identical requests is
kept: the prepared call of a small body (canonicalising depends on the suite only), the call
context of a set of ``X-Sandbox-*`` headers, and the encoded answer of a recorded hit, keyed by
the recording's slot (tool, api, canonical key, recordings scope, occurrence), never by object
identity. Their OpenAPI documentation is ``call_docs()`` (FastAPI does not document these routes
itself). Every status code and body is the one ``mock_tools.http_app`` describes.

Imports the service, render, headers and json_body modules, and Starlette's ``Route``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any
from urllib.parse import unquote

from starlette.routing import Route

from mock_tools.headers import (
    FAULTS_HEADER,
    OCCURRENCE_HEADER,
    PROVENANCE_HEADER,
    RECORDINGS_HEADER,
    SCENARIO_HEADER,
    SESSION_HEADER,
    STATE_HEADER,
)
from mock_tools.json_body import Disconnected, check_content_type, decode_json, read_body
from mock_tools.render import dumps, native_payload, reject_payload, virtual_payload
from mock_tools.service import Call, CallContext, MockToolService, Outcome, Rejected, remember

__all__ = [
    "FAULTS_HEADER",
    "OCCURRENCE_HEADER",
    "PROVENANCE_HEADER",
    "RECORDINGS_HEADER",
    "SCENARIO_HEADER",
    "SESSION_HEADER",
    "BAD_INPUT_RESPONSES",
    "CallRoutes",
    "call_docs",
    "call_routes",
    "match_call_route",
]

Scope = dict[str, Any]
Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]
RawHeaders = list[tuple[bytes, bytes]]

_MEMO_BODY_BYTES = 1024  # bodies up to this size keep their prepared call
_MEMO_SIZE = 10_000
_HIT_BODIES = 100_000
_JSON = (b"content-type", b"application/json")
_PROVENANCE = PROVENANCE_HEADER.lower().encode()
_OCCURRENCE = OCCURRENCE_HEADER.lower().encode()
_SCENARIO = SCENARIO_HEADER.lower().encode()
_SESSION = SESSION_HEADER.lower().encode()
_FAULTS = FAULTS_HEADER.lower().encode()
_RECORDINGS = RECORDINGS_HEADER.lower().encode()
_STATE = STATE_HEADER.lower().encode()
_SANDBOX = b"x-sandbox-"
_HIT = (_PROVENANCE, b"hit")

NATIVE, VIRTUAL, TYPED = "native", "virtual", "typed"


class CallRoutes:
    """The shared state of the call endpoints of one app: the service, the body limit, the
    typed paths and the three memos (all bounded; cleared when full)."""

    def __init__(
        self,
        service: MockToolService,
        *,
        max_body_bytes: int,
        typed: Mapping[str, tuple[str, str]],
    ) -> None:
        self.service = service
        self.max_body_bytes = max_body_bytes
        self.typed = dict(typed)
        self._calls: dict[tuple[str, str, str, bytes], Call] = {}
        self._contexts: dict[tuple[bytes | None, ...], CallContext] = {}
        self._hits: dict[tuple[Any, ...], tuple[bytes, bytes]] = {}
        self._no_context = CallContext()

    async def serve(self, kind: str, scope: Scope, receive: Receive, send: Send) -> None:
        virtual = kind == VIRTUAL
        content_type = content_length = None
        sandbox: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:  # the first of repeated headers counts
            if name == b"content-type":
                if content_type is None:
                    content_type = value.decode("latin-1")
            elif name == b"content-length":
                if content_length is None:
                    content_length = value.decode("latin-1")
            elif name.startswith(_SANDBOX):
                sandbox.setdefault(name, value)
        try:
            ctx = self._context(sandbox) if sandbox else self._no_context
            tool, api = self._target(kind, scope)
            check_content_type(content_type)
            raw = await read_body(receive, self.max_body_bytes, content_length)
            call = self._prepared(kind, tool, api, raw)
        except Disconnected:
            return
        except Rejected as e:
            self.service.stats.count(e.provenance)
            await _send(send, e.status, _headers(e.provenance), _reject_body(e, virtual))
            return
        try:
            self.service.admit(call, ctx, strict=kind == TYPED)
            outcome = await self.service.answer(call, ctx)
        except Rejected as e:  # counted by the service
            await _send(send, e.status, _headers(e.provenance), _reject_body(e, virtual))
            return
        await self._answer(send, outcome, virtual)

    def _context(self, sandbox: dict[bytes, bytes]) -> CallContext:
        raw = tuple(sandbox.get(n) for n in (_SCENARIO, _SESSION, _FAULTS, _RECORDINGS))
        found = self._contexts.get(raw)
        if found is not None:
            return found
        scenario = _decoded(sandbox.get(_SCENARIO))
        scope = _decoded(sandbox.get(_SESSION)) or scenario or ""
        faults = sandbox.get(_FAULTS)
        ctx = CallContext.parse(
            scenario,
            scope,
            None if faults is None else faults.decode("latin-1"),
            _decoded(sandbox.get(_RECORDINGS)),
        )
        return remember(self._contexts, raw, ctx, _MEMO_SIZE)

    def _target(self, kind: str, scope: Scope) -> tuple[str, str]:
        """The names in the path, resolved first (an unknown API is a 404 before the body)."""
        if kind == VIRTUAL:
            return "", ""
        params = scope["path_params"]
        if kind == TYPED:
            pair = self.typed.get(f"/api/{params['tool_slug']}/{params['api_slug']}")
            if pair is not None:
                return pair
            tool, api = params["tool_slug"], params["api_slug"]
        else:
            tool, api = params["tool"], params["api"]
        return self.service.resolve(tool, api)

    def _prepared(self, kind: str, tool: str, api: str, raw: bytes) -> Call:
        """The prepared call of a body; the same small body gives the same call (kept)."""
        memo = (kind, tool, api, raw)
        small = len(raw) <= _MEMO_BODY_BYTES
        if small:
            found = self._calls.get(memo)
            if found is not None:
                return found
        value = decode_json(raw)
        if kind == VIRTUAL:
            payload = _object(value, "request body")
            tool, api, category = _virtual_target(payload)
            tool, api = self.service.resolve(tool, api, category)
            args = _tool_input(payload.get("tool_input"))
        else:
            args = _object(value, "arguments")
        call = self.service.prepare(tool, api, args)
        if small:
            remember(self._calls, memo, call, _MEMO_SIZE)
        return call

    async def _answer(self, send: Send, o: Outcome, virtual: bool) -> None:
        if o.slot is not None and o.code is None and o.raw is None:
            key = (o.slot, virtual)
            cached = self._hits.get(key)
            if cached is None:
                body = dumps(virtual_payload(o) if virtual else native_payload(o))
                cached = remember(self._hits, key, (body, str(len(body)).encode()), _HIT_BODIES)
            headers = [
                _JSON,
                _HIT,
                (_OCCURRENCE, str(o.occurrence).encode()),
                (b"content-length", cached[1]),
            ]
            await send({"type": "http.response.start", "status": o.status, "headers": headers})
            await send({"type": "http.response.body", "body": cached[0]})
            return
        headers = _headers(o.provenance, o.occurrence, o.headers)
        if o.state is not None:  # a world's answer: /virtual's body has no room for it
            headers.append((_STATE, o.state.encode("latin-1")))
        if o.raw is not None:
            body = o.raw
        else:
            body = dumps(virtual_payload(o) if virtual else native_payload(o))
        await _send(send, o.status, headers, body)


class _Endpoint:
    """One call route as an ASGI app (Starlette calls a class instance without wrapping it)."""

    def __init__(self, routes: CallRoutes, kind: str) -> None:
        self.routes, self.kind = routes, kind

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.routes.serve(self.kind, scope, receive, send)


_TEMPLATES = {
    "virtual": ("virtual",),
    "call_tool": ("tools", "tool", "api"),
    "call_typed": ("api", "tool_slug", "api_slug"),
}
"""Each call route's path: its first segment, then the names of its parameters."""


def match_call_route(routes: Sequence[Route], scope: Scope) -> tuple[Route, dict[str, str]] | None:
    """The call route (of ``call_routes``) whose path ``scope``'s is, and its path parameters;
    None for any other path. What Starlette's matching of these three paths gives (parameters
    are whole non-empty segments of the decoded path, below the root path), without its regular
    expressions and scope copies: this lookup runs before every call."""
    path = scope["path"]
    root = scope.get("root_path", "")
    if root and path.startswith(root) and path != root and path[len(root)] == "/":
        path = path[len(root) :]
    parts = path.split("/")
    if parts[0] != "" or "" in parts[1:]:
        return None
    for route in routes:
        first, *names = _TEMPLATES[route.name]
        if len(parts) == len(names) + 2 and parts[1] == first:
            return route, dict(zip(names, parts[2:], strict=True))
    return None


def call_routes(routes: CallRoutes) -> list[Route]:
    """The lean routes, to put ahead of the app's own."""
    return [
        Route("/virtual", _Endpoint(routes, VIRTUAL), methods=["POST"], name="virtual"),
        Route("/tools/{tool}/{api}", _Endpoint(routes, NATIVE), methods=["POST"], name="call_tool"),
        Route(
            "/api/{tool_slug}/{api_slug}",
            _Endpoint(routes, TYPED),
            methods=["POST"],
            name="call_typed",
        ),
    ]


def _headers(
    provenance: str, occurrence: int | None = None, extra: Mapping[str, str] | None = None
) -> RawHeaders:
    out = [_JSON, (_PROVENANCE, provenance.encode("latin-1"))]
    if occurrence is not None:
        out.append((_OCCURRENCE, str(occurrence).encode()))
    for name, value in (extra or {}).items():
        out.append((name.lower().encode("latin-1"), value.encode("latin-1")))
    return out


async def _send(send: Send, status: int, headers: RawHeaders, body: bytes) -> None:
    headers.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _reject_body(e: Rejected, virtual: bool) -> bytes:
    return dumps(reject_payload(e, virtual))


def _decoded(value: bytes | None) -> str | None:
    return None if value is None else unquote(value.decode("latin-1"))


def _object(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Rejected(422, "not_an_object", f"{what} must be a JSON object")
    return value


def _virtual_target(payload: dict[str, Any]) -> tuple[str, str, str]:
    """``(tool_name, api_name, category)`` of a ``/virtual`` body."""
    tool, api = payload.get("tool_name"), payload.get("api_name")
    if not isinstance(api, str) or not api or (tool is not None and not isinstance(tool, str)):
        raise Rejected(
            422,
            "invalid_request",
            "api_name must be a non-empty string (an API name, or a function name such as "
            "current_for_weather when tool_name is empty), and tool_name a string",
        )
    category = payload.get("category")
    return tool or "", api, category if isinstance(category, str) else ""


def _tool_input(value: Any) -> dict[str, Any]:
    """The arguments of a ``/virtual`` call. ``tool_input`` that is not a JSON object is
    answered with 200 and an error, as StableToolBench's server answers it (its client turns any
    other status into an error of its own that no recorded trajectory holds)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return {}
    if isinstance(value, str):
        try:
            value = decode_json(value)
        except Rejected as e:
            if e.status != 400:  # nested too deep: refused like any body
                raise
            raise Rejected(200, "unreadable_tool_input", _UNREADABLE + e.message) from None
    if not isinstance(value, dict):
        kind = "a list" if isinstance(value, list) else f"a {type(value).__name__}"
        raise Rejected(200, "unreadable_tool_input", f"{_UNREADABLE}it is {kind}")
    return value


_UNREADABLE = "Tool input is not a JSON object of arguments, so the API was not called: "


_PATH_PARAMS = [
    {"name": name, "in": "path", "required": True, "schema": {"type": "string"}}
    for name in ("tool", "api")
]
_ANSWER = {"200": {"description": "The answer", "content": {"application/json": {"schema": {}}}}}
BAD_INPUT_RESPONSES: dict[str, Any] = {
    "400": {"description": "Malformed JSON or a bad X-Sandbox-Faults header."},
    "404": {"description": "Unknown tool or API (with the closest names)."},
    "413": {"description": "Request body too large."},
    "415": {"description": "The body is declared as another media type than JSON."},
    "422": {"description": "Arguments not an object, failing the schema, or nested too deep."},
}
_VIRTUAL_SCHEMA = {
    "type": "object",
    "properties": {
        "category": {"type": "string"},
        "tool_name": {"type": "string"},
        "api_name": {"type": "string", "minLength": 1},
        "tool_input": {"anyOf": [{"type": "object"}, {"type": "string"}]},
        "strip": {"type": "string"},
        "toolbench_key": {"type": "string"},
    },
    "required": ["tool_name", "api_name"],
}


def call_docs() -> dict[str, Any]:
    """OpenAPI path items of ``/tools/{tool}/{api}`` and ``/virtual`` (the typed routes are
    documented one per API by ``mock_tools.http_app``)."""
    return {
        "/tools/{tool}/{api}": {
            "post": {
                "tags": ["native"],
                "summary": "Call Tool",
                "description": "Call an API with the JSON body as its arguments "
                "(any spelling of the names).",
                "operationId": "call_tool_tools__tool___api__post",
                "parameters": _PATH_PARAMS,
                "requestBody": {  # optional: an absent body is the empty object
                    "required": False,
                    "content": {
                        "application/json": {
                            "schema": {"type": "object", "additionalProperties": True}
                        }
                    },
                },
                "responses": {**_ANSWER, **BAD_INPUT_RESPONSES},
            }
        },
        "/virtual": {
            "post": {
                "tags": ["stabletoolbench"],
                "summary": "Virtual",
                "description": 'StableToolBench-compatible endpoint: answers ``{"error": str, '
                '"response": ...}``.',
                "operationId": "virtual_virtual_post",
                "requestBody": {
                    "required": True,
                    "content": {"application/json": {"schema": _VIRTUAL_SCHEMA}},
                },
                "responses": {**_ANSWER, **BAD_INPUT_RESPONSES},
            }
        },
    }
