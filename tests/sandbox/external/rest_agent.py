"""An external agent that calls the suite's own REST routes instead of ``/call``, for the tests.

    python rest_agent.py native|virtual

The loop of ``examples/agents/openai_loop.py`` (the OpenAI client on the sandbox's model proxy),
but each tool call goes to ``POST $SANDBOX_TOOLS_URL/tools/{tool}/{api}`` (``native``) or to
StableToolBench's ``POST $SANDBOX_TOOLS_URL/virtual`` (``virtual``), the function names mapped
to the suite's tools through ``GET $SANDBOX_TOOLS_URL/tools``; only ``Finish`` goes to ``/call``.
The answer goes back to the model as the tool message.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.request
from typing import Any

from openai import OpenAI

TOOLS = os.environ.get("SANDBOX_TOOLS_URL", "")


def request(method: str, path: str, body: Any = None) -> str:
    data = None if body is None else json.dumps(body).encode()
    sent = urllib.request.Request(
        TOOLS + path, data=data, method=method, headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(sent, timeout=120) as response:
            return str(response.read().decode("utf-8"))
    except urllib.error.HTTPError as e:
        return str(e.read().decode("utf-8"))


def targets() -> dict[str, tuple[str, str]]:
    """Function name -> the suite's (tool, api), from the catalog."""
    out: dict[str, tuple[str, str]] = {}
    for tool in json.loads(request("GET", "/tools")):
        for api in tool["apis"]:
            out[api["name"]] = out[api["function_name"]] = (tool["name"], api["name"])
    return out


def main(route: str) -> int:
    task: dict[str, Any] = json.loads(sys.stdin.readline())
    where = targets()
    client = OpenAI()
    messages: list[dict[str, Any]] = [{"role": "user", "content": task["query"]}]
    for _ in range(20):
        reply = client.chat.completions.create(model="any", messages=messages, tools=task["tools"])
        message = reply.choices[0].message
        messages.append(message.model_dump(exclude_none=True))
        if not message.tool_calls:
            print(json.dumps({"answer": message.content or ""}))
            return 0
        for call in message.tool_calls:
            name, arguments = call.function.name, json.loads(call.function.arguments or "{}")
            if name == "Finish":
                request("POST", "/call", {"name": name, "arguments": arguments, "id": call.id})
                return 0
            tool, api = where[name]
            if route == "virtual":
                body = {"tool_name": tool, "api_name": api, "tool_input": arguments}
                answer = request("POST", "/virtual", body)
            else:
                answer = request("POST", f"/tools/{tool}/{api}", arguments)
            messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
    print(json.dumps({"give_up": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
