"""An episode's tools over MCP (streamable HTTP at ``$SANDBOX_MCP_URL``), with the official SDK.

The tools listed are the episode's offered functions, ``Finish`` included, named and described
as on stdin, their JSON Schema as ``inputSchema`` (in a conversation, those the user revealed
join the list from then on). A ``tools/call`` is the episode's ``call``
(``sandbox.external.scope``), the same path as ``POST /call``: its text content is the
observation text (``{"error", "response"}``; in a conversation, a ``Finish`` giving an answer
is a reply to the user, answered with the user's answer as ``/reply`` answers), ``isError`` set
when the call failed or was refused. One server and session manager per episode, alive as long
as the episode's scope; the SDK's DNS-rebinding protection admits loopback hosts only. Imports
the MCP SDK (only when an external episode runs) and ``sandbox.external.scope``.
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.server.streamable_http_manager import (
    StreamableHTTPASGIApp,
    StreamableHTTPSessionManager,
)
from mcp.server.transport_security import TransportSecuritySettings
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

from sandbox.external.scope import EpisodeScope

__all__ = ["episode_mcp"]

_LOOPBACK = TransportSecuritySettings(
    enable_dns_rebinding_protection=True,
    allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
    allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
)


def episode_mcp(scope: EpisodeScope) -> tuple[StreamableHTTPASGIApp, StreamableHTTPSessionManager]:
    """The MCP endpoint of one episode and its session manager (run it for the episode)."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        tools = [
            Tool(
                name=str(f["function"]["name"]),
                description=str(f["function"].get("description") or ""),
                input_schema=f["function"].get("parameters") or {"type": "object"},
            )
            for f in scope.record.offered()[0]
        ]
        return ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: CallToolRequestParams
    ) -> CallToolResult:
        arguments = json.dumps(params.arguments or {}, ensure_ascii=False)
        try:
            answer = await scope.call(params.name, arguments)
        except Exception as e:  # a bug or a harness error: the episode raises it
            scope.fail(e)
            raise
        return CallToolResult(
            content=[TextContent(type="text", text=answer.text)],
            is_error=not answer.ok,
        )

    server: Server[Any] = Server(
        "agent-sandbox episode",
        version="1",
        instructions="The tools of one episode; call Finish to answer.",
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )
    manager = StreamableHTTPSessionManager(app=server, security_settings=_LOOPBACK)
    return StreamableHTTPASGIApp(manager), manager
