"""A stateful MCP server over stdio: a to-do list whose reads depend on the writes before them.

Run as ``python todo_mcp_server.py [--no-hints] [--shared]``. Each session
(``_meta["agent-sandbox/session"]``, which the sandbox's MCP client sends per episode) has its
own list, so episodes do not see each other's writes (``--shared``: one list for everyone).
Tools, with MCP's annotations (``--no-hints``: none at all, as many servers are written):

- ``add_todo(text)`` (``readOnlyHint: false``): adds an item, answers ``{"id", "text"}``;
- ``complete_todo(id)`` (``destructiveHint: false``, no ``readOnlyHint``: a write too): marks it
  done; an unknown id is a tool error;
- ``list_todos()`` (``readOnlyHint: true``): every item, ``{"id", "text", "done"}``, in order;
- ``open_count()`` (``readOnlyHint: true``): how many are not done.

Not a mock tool server: nothing of agent-sandbox is imported, only the MCP SDK.
"""

from __future__ import annotations

import argparse
import json
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
    ToolAnnotations,
)

NOTHING: dict[str, Any] = {"type": "object", "properties": {}}


def tools(hints: bool) -> list[Tool]:
    def notes(**given: Any) -> ToolAnnotations | None:
        return ToolAnnotations(**given) if hints else None

    return [
        Tool(
            name="add_todo",
            description="Add an item to the to-do list.",
            input_schema={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            },
            annotations=notes(read_only_hint=False),
        ),
        Tool(
            name="complete_todo",
            description="Mark an item done.",
            input_schema={
                "type": "object",
                "properties": {"id": {"type": "integer"}},
                "required": ["id"],
            },
            annotations=notes(destructive_hint=False),
        ),
        Tool(
            name="list_todos",
            description="Every item of the list.",
            input_schema=NOTHING,
            annotations=notes(read_only_hint=True),
        ),
        Tool(
            name="open_count",
            description="How many items are not done.",
            input_schema=NOTHING,
            annotations=notes(read_only_hint=True, title="Open items"),
        ),
    ]


def build(hints: bool, shared: bool) -> Server[Any]:
    lists: dict[str, list[dict[str, Any]]] = {}
    listed = tools(hints)

    async def list_tools(
        ctx: ServerRequestContext, params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=listed)

    async def call_tool(ctx: ServerRequestContext, params: CallToolRequestParams) -> CallToolResult:
        session = "shared" if shared else str((ctx.meta or {}).get("agent-sandbox/session", ""))
        items = lists.setdefault(session, [])
        args = params.arguments or {}

        def answer(value: Any, error: bool = False) -> CallToolResult:
            text = value if isinstance(value, str) else json.dumps(value)
            return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error)

        if params.name == "add_todo":
            item = {"id": len(items) + 1, "text": str(args["text"]), "done": False}
            items.append(item)
            return answer({"id": item["id"], "text": item["text"]})
        if params.name == "complete_todo":
            found = [i for i in items if i["id"] == args.get("id")]
            if not found:
                return answer(f"no to-do item {args.get('id')}", error=True)
            found[0]["done"] = True
            return answer({"id": found[0]["id"], "done": True})
        if params.name == "list_todos":
            return answer(items)
        if params.name == "open_count":
            return answer({"open": sum(not i["done"] for i in items)})
        return answer(f"unknown tool {params.name}", error=True)

    return Server("todo-list", version="1", on_list_tools=list_tools, on_call_tool=call_tool)


async def main(hints: bool, shared: bool) -> None:
    server = build(hints, shared)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--no-hints", action="store_true")
    parser.add_argument("--shared", action="store_true")
    options = parser.parse_args()
    anyio.run(main, not options.no_hints, options.shared)
