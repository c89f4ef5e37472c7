"""The same loop with its tools over MCP, through the official MCP SDK client: an external agent.

    sandbox run --agent external -O command="python examples/agents/mcp_loop.py"

It connects to $SANDBOX_MCP_URL (streamable HTTP) with the MCP SDK's ``Client``, lists the
tools (the episode's functions, Finish included), offers them to the model as OpenAI functions,
and runs each call the model asks for with ``tools/call``. The model is reached through the
async OpenAI client (OPENAI_BASE_URL and OPENAI_API_KEY, the sandbox's model proxy). It ends
when Finish is accepted, or prints {"answer": ...} when the model answers in plain text. The
task's own ``tools`` on stdin are not used: the MCP server is the source of the tools.
Needs the `openai` and `mcp` packages.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

from mcp import Client
from openai import AsyncOpenAI

SYSTEM = (
    "You solve the user's task with the functions offered. Call one function at a time. "
    "When you have the answer, call Finish with return_type give_answer and the final answer; "
    "if the task cannot be done, call Finish with return_type give_up_and_restart."
)
MAX_TURNS = 30


def as_function(tool: Any) -> dict[str, Any]:
    """An MCP tool as an OpenAI function."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description or "",
            "parameters": tool.input_schema,
        },
    }


def text_of(result: Any) -> str:
    """A tool result's text content (the sandbox answers {"error", "response"} as text)."""
    return "\n".join(getattr(item, "text", "") for item in result.content)


async def solve(task: dict[str, Any], tools: Client) -> dict[str, Any] | None:
    """Run the loop; the line to print, or None when Finish was accepted."""
    functions = [as_function(t) for t in (await tools.list_tools()).tools]
    model = AsyncOpenAI()
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": task.get("system_prompt") or SYSTEM},
        {"role": "user", "content": task["query"]},
    ]
    for _ in range(MAX_TURNS):
        reply = await model.chat.completions.create(
            model=os.environ.get("OPENAI_MODEL", "sandbox"), messages=messages, tools=functions
        )
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            return {"answer": message.content or ""}
        for call in message.tool_calls:
            try:
                arguments = json.loads(call.function.arguments or "{}")
            except ValueError as e:
                answer = json.dumps({"error": f"arguments are not JSON: {e}", "response": ""})
            else:
                result = await tools.call_tool(call.function.name, arguments)
                answer = text_of(result)
                if call.function.name == "Finish" and not result.is_error:
                    return None
            messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
    return {"give_up": True, "reason": f"no answer after {MAX_TURNS} turns"}


async def main() -> int:
    task: dict[str, Any] = json.loads(sys.stdin.readline())
    async with Client(os.environ["SANDBOX_MCP_URL"]) as tools:
        line = await solve(task, tools)
    if line is not None:
        print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
