"""A tool-calling loop that holds a conversation with the task's user: an external agent.

    sandbox run --agent external -O command="python examples/agents/chat_loop.py"

It is examples/agents/openai_loop.py plus the user. In a conversational task (``"conversation":
true`` on stdin) whatever the model says to the user, its text without a function call or the
answer of its Finish(give_answer), is sent with POST $SANDBOX_TOOLS_URL/reply; the user's answer
comes back (``{"user", "signal", "reveal", "tools"}``) and joins the history as a user message,
after the reply as an assistant message with its text. The loop ends when the user ends the
conversation (a ``signal``), when the model gives up (Finish(give_up_and_restart), sent to
/call), or when the sandbox refuses a request (the episode is over: a budget, the user failed).
In a task without a user it behaves as openai_loop.py. Needs the `openai` package only.
"""

from __future__ import annotations

import json
import os
import sys
import urllib.error
import urllib.request
from typing import Any

from openai import OpenAI

SYSTEM = (
    "You help the user with the functions offered. Call one function at a time. Whatever you "
    "write without calling a function, and the final answer of Finish, is said to the user, "
    "who answers; ask when something is missing. If the task cannot be done, call Finish with "
    "return_type give_up_and_restart."
)
MAX_TURNS = 40


def post(path: str, body: dict[str, Any]) -> tuple[int, str]:
    """POST ``body`` to the episode's ``path``: the status and the answer's text."""
    request = urllib.request.Request(
        os.environ["SANDBOX_TOOLS_URL"] + path,
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=120) as response:
            return response.status, str(response.read().decode("utf-8"))
    except urllib.error.HTTPError as e:  # a refusal (budget spent, episode over) is text too
        return e.code, str(e.read().decode("utf-8"))


def said_to_user(message: Any) -> str | None:
    """What a model turn says to the user: the answer of its Finish(give_answer), else its text
    when it calls nothing; None when it only calls functions."""
    for call in message.tool_calls or []:
        if call.function.name == "Finish":
            try:
                args = json.loads(call.function.arguments or "{}")
            except ValueError:
                return None
            if isinstance(args, dict) and args.get("return_type") == "give_answer":
                return str(args.get("final_answer") or "")
            return None
    return None if message.tool_calls else (message.content or "")


def main() -> int:
    task: dict[str, Any] = json.loads(sys.stdin.readline())
    conversation = bool(task.get("conversation"))
    tools: list[dict[str, Any]] = task["tools"]
    client = OpenAI()
    model = os.environ.get("OPENAI_MODEL", "sandbox")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": task.get("system_prompt") or SYSTEM},
        {"role": "user", "content": task["query"]},
    ]
    for _ in range(MAX_TURNS):
        reply = client.chat.completions.create(model=model, messages=messages, tools=tools)
        message = reply.choices[0].message
        said = said_to_user(message)
        calls = [c for c in message.tool_calls or [] if said is None or c.function.name != "Finish"]
        if calls:  # the turn's calls run first (a Finish giving up among them)
            turn = message.model_dump(exclude_none=True)
            turn["tool_calls"] = [c.model_dump(exclude_none=True) for c in calls]
            messages.append(turn)
            for call in calls:
                body = {"name": call.function.name, "arguments": call.function.arguments}
                status, answer = post("/call", {**body, "id": call.id})
                if call.function.name == "Finish" or status != 200:
                    return 0  # gave up, or the episode is over
                messages.append({"role": "tool", "tool_call_id": call.id, "content": answer})
        if said is None:
            continue
        if not conversation:
            print(json.dumps({"answer": said}))
            return 0
        status, answer = post("/reply", {"message": said})
        if status != 200:
            return 0  # the episode is over: a budget, the user failed
        heard = json.loads(answer)
        messages.append({"role": "assistant", "content": said})
        if heard["signal"] is not None:
            return 0  # the user ended the conversation
        messages.append({"role": "user", "content": heard["user"]})
        tools = heard["tools"]
    print(json.dumps({"give_up": True, "reason": f"no end after {MAX_TURNS} turns"}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
