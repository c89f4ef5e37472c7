"""A small MCP server over stdio that is not a mock tool server, for the MCP tool env tests.

Run as ``python mcp_fixture_server.py [--die-after N]``. Its tools have the kinds of names,
schemas and answers other servers have:

- ``get_weather(city)``: plain text, not JSON;
- ``add(a, b)``: structured content ``{"sum": ...}``;
- ``stock_for_warehouse(item)``: a ToolBench-style name, JSON text;
- ``next_ticket()``: a counter per session (``_meta["agent-sandbox/session"]``), so the same call
  answers differently the second time;
- ``broken()``: always a tool error.

``--die-after N`` makes the process exit, without answering, on its (N+1)th tool call: a server
lost mid-run.
"""

from __future__ import annotations

import argparse
import json
import os
from collections import Counter
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

TOOLS = [
    Tool(
        name="get_weather",
        description="Weather in a city.",
        input_schema={
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    ),
    Tool(
        name="add",
        description="Add two numbers.",
        input_schema={
            "type": "object",
            "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
            "required": ["a", "b"],
        },
    ),
    Tool(
        name="stock_for_warehouse",
        description="Units of an item in stock.",
        input_schema={"type": "object", "properties": {"item": {"type": "string"}}},
    ),
    Tool(
        name="next_ticket", description="The next ticket number.", input_schema={"type": "object"}
    ),
    Tool(name="broken", description="Always fails.", input_schema={"type": "object"}),
]


def build(die_after: int | None) -> Server[Any]:
    calls = 0
    tickets: Counter[str] = Counter()

    async def list_tools(
        ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        nonlocal calls
        calls += 1
        if die_after is not None and calls > die_after:
            os._exit(3)
        args = params.arguments or {}
        text = lambda value: [TextContent(type="text", text=value)]  # noqa: E731
        if params.name == "get_weather":
            return CallToolResult(content=text(f"Sunny, 21 C in {args['city']}"))
        if params.name == "add":
            total = args["a"] + args["b"]
            return CallToolResult(content=text(str(total)), structured_content={"sum": total})
        if params.name == "stock_for_warehouse":
            item = str(args.get("item", ""))
            return CallToolResult(content=text(json.dumps({"item": item, "units": len(item)})))
        if params.name == "next_ticket":
            session = str((ctx.meta or {}).get("agent-sandbox/session", "default"))
            tickets[session] += 1
            return CallToolResult(content=text(json.dumps({"ticket": tickets[session]})))
        return CallToolResult(content=text("the tool broke"), is_error=True)

    return Server("fixture-tools", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(die_after: int | None) -> None:
    server = build(die_after)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--die-after", type=int, default=None)
    anyio.run(main, parser.parse_args().die_after)
