"""The model proxy's wire: an OpenAI ``/v1/chat/completions`` request in, a completion out.

``model_request(body)`` reads a request body into what the model is asked (``ModelRequest``:
the messages, the tools, and every other field as parameters, those that only shape the
transport left out: ``model``, ``stream``, ``stream_options``, ``n``) or a ``BadRequest``.
The answer is a ``chat.completion`` object (``agents.models.exchange.completion_of``), sent as
JSON or, when the request asked for a stream, as server-sent events (``stream_chunks``): the
role and the text, one chunk per tool call, the finish reason, the usage when
``stream_options.include_usage`` asks for it, then ``[DONE]``. The chunks are made from the
completion, so a replayed answer streams exactly as it did. Refusals and bad requests are
OpenAI error bodies (``error_body``) with ``x-should-retry: false``: the model layer already
retried what was worth retrying, and a spent budget stays spent. Pure; imports ``agents``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from agents.models.exchange import ModelRequest

__all__ = [
    "BadRequest",
    "ERROR_TYPES",
    "MAX_DEPTH",
    "NO_RETRY",
    "error_body",
    "json_body",
    "model_request",
    "models_list",
    "sse_events",
    "stream_chunks",
]

MAX_DEPTH = 64
"""The deepest nesting of a request body's JSON read (a chat request needs about six)."""
TRANSPORT_FIELDS = ("model", "messages", "tools", "stream", "stream_options", "n")
"""Request fields that are not parameters of the model call."""

ERROR_TYPES = {
    400: "invalid_request_error",
    404: "not_found_error",
    429: "insufficient_quota",
    500: "server_error",
    501: "server_error",
    502: "server_error",
}
NO_RETRY = {"x-should-retry": "false"}
"""Tells the OpenAI SDKs not to retry (they honour it before their own status rules)."""


@dataclass(frozen=True)
class BadRequest:
    message: str
    param: str | None = None


def json_body(raw: bytes) -> Any:
    """A request body's JSON, or a ``BadRequest`` saying why not (not JSON, or nested deeper
    than ``MAX_DEPTH``: a body 100,000 levels deep is refused, not a recursion error)."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError) as e:
        if isinstance(e, RecursionError):
            return BadRequest(f"the request body is nested deeper than {MAX_DEPTH} levels")
        return BadRequest(f"the request body is not JSON: {e}")
    if _deeper_than(data, MAX_DEPTH):
        return BadRequest(f"the request body is nested deeper than {MAX_DEPTH} levels")
    return data


def _deeper_than(data: Any, limit: int) -> bool:
    todo = [(data, 1)]
    while todo:
        value, depth = todo.pop()
        if isinstance(value, (dict, list)):
            if depth > limit:
                return True
            items = value.values() if isinstance(value, dict) else value
            todo.extend((v, depth + 1) for v in items if isinstance(v, (dict, list)))
    return False


def _message_problem(i: int, m: Any) -> str | None:
    """Why message ``i`` is not a chat message the model layer can take (None when it is)."""
    if not isinstance(m, dict) or not isinstance(m.get("role"), str):
        return f"messages[{i}] must be an object with a role"
    content = m.get("content")
    if content is not None and not isinstance(content, (str, list)):
        return f"messages[{i}].content must be text, an array of parts or null"
    if isinstance(content, list) and not all(isinstance(p, dict) for p in content):
        return f"messages[{i}].content must hold content part objects"
    calls = m.get("tool_calls")
    if calls is not None:
        if not isinstance(calls, list):
            return f"messages[{i}].tool_calls must be an array of tool calls"
        for j, call in enumerate(calls):
            function = call.get("function") if isinstance(call, dict) else None
            if not (
                isinstance(function, dict)
                and isinstance(function.get("name"), str)
                and isinstance(function.get("arguments", ""), str)
                and isinstance(call.get("id", ""), str)
            ):
                return (
                    f"messages[{i}].tool_calls[{j}] must be "
                    '{"id": "...", "type": "function", "function": {"name": "...", '
                    '"arguments": "<JSON text>"}}'
                )
    for key in ("tool_call_id", "name"):
        if m.get(key) is not None and not isinstance(m.get(key), str):
            return f"messages[{i}].{key} must be text"
    return None


def model_request(body: Any) -> ModelRequest | BadRequest:
    """The model call a request body asks for, or why it cannot be made."""
    if not isinstance(body, dict):
        return BadRequest("the request body must be a JSON object")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        return BadRequest("messages must be a non-empty array of messages", "messages")
    for i, m in enumerate(messages):
        problem = _message_problem(i, m)
        if problem is not None:
            return BadRequest(problem, "messages")
    tools = body.get("tools")
    if tools is None:
        tools = []
    if not isinstance(tools, list) or not all(isinstance(t, dict) for t in tools):
        return BadRequest("tools must be an array of tool objects", "tools")
    if body.get("n") not in (None, 1):
        return BadRequest("this proxy answers one choice per request: n must be 1", "n")
    params = {k: v for k, v in body.items() if k not in TRANSPORT_FIELDS}
    return ModelRequest(messages=messages, tools=tools, params=params)


def error_body(status: int, code: str, message: str, param: str | None = None) -> dict[str, Any]:
    """An OpenAI error object."""
    kind = ERROR_TYPES.get(status, "server_error")
    return {"error": {"message": message, "type": kind, "param": param, "code": code}}


def models_list(name: str) -> dict[str, Any]:
    """``GET /v1/models``: the one model the proxy answers with."""
    return {
        "object": "list",
        "data": [{"id": name, "object": "model", "created": 0, "owned_by": "agent-sandbox"}],
    }


def stream_chunks(completion: dict[str, Any], *, include_usage: bool) -> list[dict[str, Any]]:
    """A completion as the ``chat.completion.chunk`` objects of a stream."""
    head = {k: completion[k] for k in ("id", "created", "model")}
    choice = completion["choices"][0]
    message = choice["message"]

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        one = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**head, "object": "chat.completion.chunk", "choices": [one]}

    out = [chunk({"role": "assistant", "content": message.get("content")})]
    for i, call in enumerate(message.get("tool_calls") or []):
        out.append(chunk({"tool_calls": [{"index": i, **call}]}))
    out.append(chunk({}, choice.get("finish_reason") or "stop"))
    if include_usage:
        out.append(
            {**head, "object": "chat.completion.chunk", "choices": [], "usage": completion["usage"]}
        )
    return out


def sse_events(chunks: list[dict[str, Any]]) -> Iterator[bytes]:
    """Server-sent events of the chunks, then ``[DONE]``."""
    for c in chunks:
        yield b"data: " + json.dumps(c, ensure_ascii=False).encode("utf-8") + b"\n\n"
    yield b"data: [DONE]\n\n"


def include_usage(body: Any) -> bool:
    """Whether a streaming request asked for the usage chunk."""
    options = body.get("stream_options") if isinstance(body, dict) else None
    return isinstance(options, dict) and options.get("include_usage") is True
