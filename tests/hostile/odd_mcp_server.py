"""An MCP server over stdio that misbehaves on purpose, for the hostile tests.

``python odd_mcp_server.py nan``: one tool, ``measure(item)``, answering JSON text that holds
numbers JSON cannot (``{"nan": NaN, "big": Infinity, ...}``), as Python's ``json.dumps`` writes.
``python odd_mcp_server.py crash``: writes a few lines to stderr and exits 3 before speaking MCP.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)

MEASURE = Tool(
    name="measure",
    description="Measurements of an item.",
    input_schema={"type": "object", "properties": {"item": {"type": "string"}}},
)


def build() -> Server[Any]:
    async def list_tools(
        ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=[MEASURE])

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        item = str((params.arguments or {}).get("item", ""))
        body = {"item": item, "nan": float("nan"), "big": float("inf"), "low": [-float("inf")]}
        return CallToolResult(content=[TextContent(type="text", text=json.dumps(body))])

    return Server("odd-tools", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def serve() -> None:
    server = build()
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    if sys.argv[1:] == ["crash"]:
        print("starting odd-tools", file=sys.stderr)
        print("error: config file odd.toml not found", file=sys.stderr)
        sys.exit(3)
    anyio.run(serve)
