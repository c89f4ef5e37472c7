"""A fake OpenAI-compatible model for the k=3 workload, as fast as Python serves HTTP.

``python -m bench.fake_model PORT`` serves, with uvicorn on uvloop + httptools on 127.0.0.1 (a
raw ASGI app, the access log off), ``POST /v1/chat/completions`` and ``GET /v1/models``. A chat
request's answer depends only on its messages: the item named in the first user message, and how
many tool results follow. Under three, it calls ``lookup_for_ledger`` for the next part (native
tool calls, usage counted); at three, ``Finish(give_answer)`` with the values the tool results
hold. So an episode of the ``bench.k3_suite`` suite makes the same four model calls and three tool
calls as the offline ``reference`` model, and solves its task.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from bench.k3_suite import FUNCTION, PARTS, answer_text

_ITEM = re.compile(r"item-\d+")
_VALUE = re.compile(r'"value":\s*(\d+)')
_MODELS = json.dumps({"object": "list", "data": [{"id": "k3", "object": "model"}]}).encode()

Receive = Callable[[], Awaitable[dict[str, Any]]]
Send = Callable[[dict[str, Any]], Awaitable[None]]


def _call(n: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": f"call_{n}",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(arguments)},
    }


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The completion for ``request`` (see the module doc)."""
    messages = request.get("messages") or []
    query = next((m.get("content") or "" for m in messages if m.get("role") == "user"), "")
    found = _ITEM.search(query)
    item = found.group(0) if found else "item-00000"
    results = [m.get("content") or "" for m in messages if m.get("role") == "tool"]
    if len(results) < PARTS:
        part = len(results) + 1
        content = f"Part {part} of {item}."
        calls = [_call(len(results), FUNCTION, {"item": item, "part": part})]
    else:
        values: list[object] = [v for r in results for v in _VALUE.findall(r)][:PARTS]
        content = "I have the three parts."
        calls = [
            _call(
                len(results),
                "Finish",
                {"return_type": "give_answer", "final_answer": answer_text(item, values)},
            )
        ]
    prompt = sum(len(m.get("content") or "") for m in messages) // 4
    return {
        "id": "chatcmpl-k3",
        "object": "chat.completion",
        "created": 0,
        "model": str(request.get("model") or "k3"),
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content, "tool_calls": calls},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 20, "total_tokens": prompt + 20},
    }


async def app(scope: dict[str, Any], receive: Receive, send: Send) -> None:
    if scope["type"] != "http":
        return
    body = b""
    more = True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    if scope["method"] == "POST" and scope["path"].endswith("/chat/completions"):
        status, out = 200, json.dumps(answer(json.loads(body))).encode()
    elif scope["path"].endswith("/models"):
        status, out = 200, _MODELS
    else:
        status, out = 404, b'{"error": {"message": "not found"}}'
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(out))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": out})


def main(argv: list[str]) -> None:
    import uvicorn

    from bench.http_servers import HOST, stack

    uvicorn.run(app, host=HOST, port=int(argv[0]), log_level="warning", access_log=False, **stack())


if __name__ == "__main__":
    main(sys.argv[1:])
