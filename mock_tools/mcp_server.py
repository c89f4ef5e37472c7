"""The MCP transport: a suite's APIs as MCP tools, over the same ``MockToolService`` as HTTP.

Built on the official MCP Python SDK's low-level ``Server`` (the high-level ``MCPServer`` derives
input schemas from Python signatures; the suite's schemas are raw JSON Schema). Served over
streamable HTTP at ``/mcp`` on the app of ``mock_tools.http_app`` (``mcp_route``) or over stdio
(``serve_stdio``, through ``mock_tools.mcp_stdio``: every line answered, requests in flight
answered before the server stops).

- ``tools/list``: one tool per API, named as agents see it in OpenAI tools (``ApiSpec.function``
  or ``<api>_for_<tool>``, ``mock_tools.names.unique_function_names``), with the API's JSON Schema
  as ``inputSchema``, ``_meta`` naming the suite's ``tool`` and ``api``, and ``readOnlyHint`` when
  the suite says whether it writes (a world's tools, ``writes``/``reads``, an API's
  ``read_only``: ``mock_tools.history.api_kinds``); pages of ``PAGE_SIZE``.
- ``tools/call``: ``MockToolService.handle``. The text content is the body ``POST /virtual``
  answers (``{"error": ..., "response": ...}``); ``structuredContent`` is the native answer
  (``ok``, ``body``, ``error``, ``provenance``, ``code``). A recorded error, a miss, an injected
  fault and bad arguments are tool errors (``isError: true``), never protocol failures; an unknown
  tool name is a JSON-RPC error (-32602) naming the closest tools, as the MCP spec asks, and so
  are arguments holding a number JSON cannot (``NaN``, ``Infinity``, ``1e999``: the SDK reads
  them; the HTTP routes answer such a body 400).
- Session (the occurrence scope, the write history, and in a world suite the world session):
  ``_meta["agent-sandbox/session"]`` when the client names one (the sandbox's MCP tool env does,
  one per episode), else an ``X-Sandbox-Session`` header, both the session of that very name
  (the one ``POST /sessions`` opens and the REST routes' header names); else the MCP session,
  ``mcp:<Mcp-Session-Id>``; over stdio the one connection, ``mcp:stdio-<id>``. A stateless HTTP
  call with none of these is a session of its own (every call a first occurrence, a fresh world),
  so clients never share counts or state.
  ``_meta["agent-sandbox/scenario"]`` (or ``X-Sandbox-Scenario``) picks per-scenario faults,
  ``_meta["agent-sandbox/faults"]`` (or ``X-Sandbox-Faults``) overrides the fault config.

No lookup logic lives here. Imports the SDK, the service, history, names, json_numbers, mcp_stdio,
render and suite modules only; the SDK is imported by whoever imports this module, never by ``import
mock_tools``.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote

from mcp import MCPError
from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)
from starlette.routing import Route

from mock_tools.history import api_kinds
from mock_tools.json_numbers import first_non_finite
from mock_tools.mcp_stdio import DEFAULT_DRAIN, serve_lines
from mock_tools.names import unique_function_names
from mock_tools.render import dumps, native_payload, reject_payload, virtual_payload
from mock_tools.service import CallContext, MockToolService, Outcome, Rejected

__all__ = [
    "META_API",
    "META_FAULTS",
    "META_SCENARIO",
    "META_SESSION",
    "META_TOOL",
    "PAGE_SIZE",
    "mcp_route",
    "mcp_server",
    "serve_stdio",
    "tool_names",
]

META_SESSION = "agent-sandbox/session"
META_SCENARIO = "agent-sandbox/scenario"
META_FAULTS = "agent-sandbox/faults"
META_TOOL = "agent-sandbox/tool"
META_API = "agent-sandbox/api"
PAGE_SIZE = 1000
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def tool_names(service: MockToolService) -> dict[str, tuple[str, str]]:
    """MCP tool name -> the suite's ``(tool, api)``, in catalog order."""
    apis = service.suite.apis
    return unique_function_names((t, a, spec.function) for (t, a), spec in apis.items())


class _Tools:
    """The handlers of one server: the tool list (built once) and the call path."""

    def __init__(
        self, service: MockToolService, connection_scope: str | None, page_size: int
    ) -> None:
        self.service = service
        self.page_size = page_size
        self.names = tool_names(service)
        self.connection_scope = connection_scope
        kinds = api_kinds(service.suite.meta, service.suite.apis)
        self.tools = [
            Tool(
                name=name,
                title=f"{tool} / {api}",
                description=service.suite.apis[(tool, api)].description or f"{api} of {tool}",
                input_schema=service.suite.apis[(tool, api)].parameters,
                annotations=_hints(kinds[(tool, api)]),
                meta={META_TOOL: tool, META_API: api},
            )
            for name, (tool, api) in self.names.items()
        ]

    async def list_tools(
        self, ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        cursor = params.cursor if params is not None else None
        start = 0
        if cursor:
            if not cursor.isdigit() or int(cursor) > len(self.tools):
                raise MCPError(INVALID_PARAMS, f"invalid cursor {cursor!r}")
            start = int(cursor)
        end = start + self.page_size
        more = str(end) if end < len(self.tools) else None
        return ListToolsResult(tools=self.tools[start:end], next_cursor=more)

    async def call_tool(
        self, ctx: ServerRequestContext, params: CallToolRequestParams
    ) -> CallToolResult:
        args: Any = params.arguments if params.arguments is not None else {}
        odd = first_non_finite(args)  # the SDK reads NaN and 1e999; HTTP answers them 400
        if odd is not None:
            raise MCPError(INVALID_PARAMS, f"arguments hold a number JSON cannot: {odd}")
        tool, api = self.names.get(params.name) or ("", params.name)
        try:
            call = self._context(ctx)
        except Rejected as e:
            self.service.stats.count(e.provenance)
            return _rejected(e)
        try:
            _, _, outcome = await self.service.handle(tool, api, args, call)
        except Rejected as e:
            if e.code == "unknown_api":
                known = ", ".join(self._closest(params.name)) or "(none)"
                raise MCPError(
                    INVALID_PARAMS, f"unknown tool {params.name!r}; closest: {known}"
                ) from None
            return _rejected(e)
        return _result(outcome)

    def _closest(self, name: str) -> list[str]:
        """The tool names closest to ``name`` (the service's suggestions, as MCP names)."""
        by_slash = {f"{tool}/{api}": n for n, (tool, api) in self.names.items()}
        return [by_slash[s] for s in self.service.resolver.suggest("", name) if s in by_slash]

    def _context(self, ctx: ServerRequestContext) -> CallContext:
        meta: Mapping[str, Any] = ctx.meta or {}
        headers: Mapping[str, str] = ctx.request.headers if ctx.request is not None else {}
        scenario = meta.get(META_SCENARIO) or _decoded(headers.get("x-sandbox-scenario"))
        faults = meta.get(META_FAULTS) or headers.get("x-sandbox-faults")
        named = meta.get(META_SESSION) or _decoded(headers.get("x-sandbox-session"))
        if named:
            scope = str(named)
        else:
            own = headers.get("mcp-session-id") or self.connection_scope
            scope = f"mcp:{own or f'call-{uuid.uuid4().hex}'}"
        return CallContext.parse(str(scenario) if scenario else None, scope, faults or None)


def _decoded(value: str | None) -> str | None:
    """A header value as the REST routes read it (percent-decoded: ``header_value``)."""
    return None if value is None else unquote(value)


def _hints(writes: bool | None) -> ToolAnnotations | None:
    """MCP's annotations of an API the suite says reads (``readOnlyHint: true``) or writes."""
    return None if writes is None else ToolAnnotations(read_only_hint=not writes)


def _result(o: Outcome) -> CallToolResult:
    raw = o.raw if o.raw is not None else dumps(virtual_payload(o))
    return CallToolResult(
        content=[TextContent(type="text", text=raw.decode("utf-8", "replace"))],
        structured_content=native_payload(o),
        is_error=not o.response.ok,
    )


def _rejected(e: Rejected) -> CallToolResult:
    return CallToolResult(
        content=[TextContent(type="text", text=dumps(reject_payload(e, virtual=True)).decode())],
        structured_content=reject_payload(e, virtual=False),
        is_error=True,
    )


def mcp_server(
    service: MockToolService, *, stdio: bool = False, page_size: int = PAGE_SIZE
) -> Server[Any]:
    """An MCP server (SDK low-level ``Server``) over ``service``. ``stdio``: one connection, so
    calls that name no session share one occurrence scope. ``tools/list`` answers in pages of
    ``page_size`` tools."""
    if page_size < 1:
        raise ValueError("page_size must be at least 1")
    tools = _Tools(service, f"stdio-{uuid.uuid4().hex}" if stdio else None, page_size)
    suite = service.suite
    return Server(
        f"mock-tools:{suite.name}",
        version=suite.meta.version,
        instructions=suite.meta.description or None,
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )


def mcp_route(
    service: MockToolService, *, host: str = "127.0.0.1", path: str = "/mcp"
) -> tuple[Route, StreamableHTTPSessionManager]:
    """A Starlette route serving ``service`` over streamable HTTP at ``path``, and its session
    manager, which the host app's lifespan must run (``async with manager.run(): ...``).

    On a loopback ``host`` the SDK's DNS-rebinding protection is on (only loopback ``Host``
    headers); on any other host it is off, like the REST routes beside it."""
    server = mcp_server(service)
    security = None
    if host not in LOOPBACK:
        security = TransportSecuritySettings(enable_dns_rebinding_protection=False)
    server.streamable_http_app(streamable_http_path=path, transport_security=security, host=host)
    manager = server.session_manager
    route = Route(path, endpoint=StreamableHTTPASGIApp(manager), methods=["GET", "POST", "DELETE"])
    return route, manager


async def serve_stdio(service: MockToolService, *, drain: float = DEFAULT_DRAIN) -> None:
    """Serve ``service`` over stdio (newline-delimited JSON-RPC) until the client closes it.

    Every line gets an answer (a line that is not one JSON-RPC message a JSON-RPC error), and
    the requests in flight when stdin closes are answered first, for up to ``drain`` seconds
    (``mock_tools.mcp_stdio``). Nothing but protocol messages goes to stdout; logs go to
    stderr."""
    server = mcp_server(service, stdio=True)
    try:
        await serve_lines(server, drain=drain)
    finally:
        await service.aclose()
