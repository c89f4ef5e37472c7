"""A bare tool-calling loop with the OpenAI client, its tools called over HTTP: an external agent.

    sandbox run --agent external -O command="python examples/agents/openai_loop.py"

It reads its task (one JSON object) from stdin, talks to the model through the OpenAI client
(which reads OPENAI_BASE_URL and OPENAI_API_KEY, the sandbox's model proxy), and runs each tool
call the model asks for with POST $SANDBOX_TOOLS_URL/call, passing the call's id so the
sandbox attaches the answer to the turn that asked for it. The answer text goes back to the
model as the tool message. It ends when the model calls Finish (also sent to /call), or prints
{"answer": ...} when the model answers in plain text. Nothing here is specific to the sandbox
but the two URLs: point them at another OpenAI-compatible endpoint and tool server and it runs.
Needs the `openai` package only.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from typing import Any

from openai import OpenAI

SYSTEM = (
    "You solve the user's task with the functions offered. Call one function at a time. "
    "When you have the answer, call Finish with return_type give_answer and the final answer; "
    "if the task cannot be done, call Finish with return_type give_up_and_restart."
)
MAX_TURNS = 30


def call_tool(name: str, arguments: str, call_id: str) -> str:
    """One tool call through the sandbox's /call; its answer text ({"error", "response"})."""
    body = json.dumps({"name": name, "arguments": arguments, "id": call_id}).encode()
    request = urllib.request.Request(
        os.environ["SANDBOX_TOOLS_URL"] + "/call",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return str(response.read().decode("utf-8"))
    except urllib.error.HTTPError as e:  # a refusal (budget spent, episode over) is text too
        return str(e.read().decode("utf-8"))


def accepted(answer: str) -> bool:
    """Whether a Finish call was taken (an unusable one is answered with an error)."""
    try:
        data = json.loads(answer)
    except ValueError:
        return False
    return isinstance(data, dict) and "response" in data and not data.get("error")


def main() -> int:
    task: dict[str, Any] = json.loads(sys.stdin.readline())
    client = OpenAI()
    model = os.environ.get("OPENAI_MODEL", "sandbox")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": task.get("system_prompt") or SYSTEM},
        {"role": "user", "content": task["query"]},
    ]
    for _ in range(MAX_TURNS):
        reply = client.chat.completions.create(model=model, messages=messages, tools=task["tools"])
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print(json.dumps({"answer": message.content or ""}))
            return 0
        for call in message.tool_calls:
            answer = call_tool(call.function.name, call.function.arguments, call.id)
            if call.function.name == "Finish" and accepted(answer):
                return 0
            messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
    print(json.dumps({"give_up": True, "reason": f"no answer after {MAX_TURNS} turns"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
