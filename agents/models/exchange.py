"""The record of model calls made through an OpenAI-compatible proxy, and their positional replay.

An external agent (a process of its own: ``sandbox.external``) talks to the model through the
sandbox's proxy, so the sandbox cannot rebuild its requests from the trajectory's tree the way it
does for its own loops (``messages_for``). It keeps them instead, one *exchange* per model call,
in ``Trajectory.exchanges``::

    {"node": 3,                          # the node the answer made
     "request": {"messages_from": 4,     # messages shared with the previous request
                 "messages": [...],      # the rest of this request's messages
                 "tools": [...],         # left out when the same as the previous request's
                 "params": {...},        # every other field the model was asked with
                 "model": "gpt-4o", "stream": false},   # as the agent wrote them (not compared)
     "response": {...}}                  # the chat.completion object the agent was served
    # or, for a call that failed after the model layer's retries:
     "error": "server: ...", "kind": "server"

The messages are stored as a delta against the previous request (an agent resends its whole
history every time), so a record grows with the conversation, not with its square.

``ExchangeReplayModel`` answers the k-th request of an episode with the k-th recorded answer
(matched by position, never by content), after checking that the request is the recorded one:
the first request that differs raises ``ReplayDivergence`` naming the request and the first
field that differs. The answer's turn carries the exact response served at recording time in
``Turn.raw[EXCHANGE_RESPONSE]``, so a proxy can serve it again byte for byte.

``completion_of(turn, ...)`` renders a turn as a ``chat.completion`` object and ``turn_of`` reads
one back; they are the wire format both sides agree on. Pure: imports the agents' model records
and errors only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agents.errors import ModelError, ReplayDivergence
from agents.model import Message, ToolCall, Turn, Usage
from agents.trajectory import Node, Trajectory

__all__ = [
    "EXCHANGE_RESPONSE",
    "ExchangeReplayModel",
    "ModelRequest",
    "completion_of",
    "exchange_record",
    "first_difference",
    "recorded_requests",
    "turn_of",
]

EXCHANGE_RESPONSE = "exchange_response"
"""The key of ``Turn.raw`` under which a replayed turn carries the response served when it was
recorded."""


@dataclass(frozen=True)
class ModelRequest:
    """What the model is asked: the arguments of ``Model.complete``."""

    messages: list[Message]
    tools: list[dict[str, Any]] = field(default_factory=list)
    params: dict[str, Any] = field(default_factory=dict)


def _shared_prefix(a: list[Message], b: list[Message]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def exchange_record(
    node: int,
    request: ModelRequest,
    previous: ModelRequest | None,
    *,
    model: str | None,
    stream: bool,
    response: dict[str, Any] | None = None,
    error: ModelError | None = None,
) -> dict[str, Any]:
    """One exchange (see the module docstring): ``request`` stored against ``previous``."""
    shared = _shared_prefix(previous.messages, request.messages) if previous else 0
    stored: dict[str, Any] = {"messages_from": shared, "messages": request.messages[shared:]}
    if previous is None or previous.tools != request.tools:
        stored["tools"] = request.tools
    stored["params"] = request.params
    stored["model"] = model
    stored["stream"] = stream
    record: dict[str, Any] = {"node": node, "request": stored}
    if error is not None:
        record["error"] = str(error)
        record["kind"] = error.kind
    else:
        record["response"] = response
    return record


def recorded_requests(exchanges: list[dict[str, Any]]) -> list[ModelRequest]:
    """The full requests of an episode's exchanges, in order."""
    out: list[ModelRequest] = []
    for exchange in exchanges:
        stored = exchange["request"]
        before = out[-1] if out else ModelRequest(messages=[])
        messages = before.messages[: stored["messages_from"]] + list(stored["messages"])
        tools = stored.get("tools", before.tools)
        out.append(ModelRequest(messages=messages, tools=tools, params=dict(stored["params"])))
    return out


def _path_difference(want: Any, got: Any, path: str) -> tuple[str, Any, Any] | None:
    """The first place where two JSON values differ: ``(path, recorded, got)``."""
    if isinstance(want, dict) and isinstance(got, dict):
        for key in [*want, *(k for k in got if k not in want)]:
            if key not in want or key not in got:
                return f"{path}.{key}", want.get(key), got.get(key)
            found = _path_difference(want[key], got[key], f"{path}.{key}")
            if found:
                return found
        return None
    if isinstance(want, list) and isinstance(got, list):
        for i, (a, b) in enumerate(zip(want, got, strict=False)):
            found = _path_difference(a, b, f"{path}[{i}]")
            if found:
                return found
        if len(want) != len(got):
            return f"{path} (length)", len(want), len(got)
        return None
    return None if want == got else (path, want, got)


def first_difference(want: ModelRequest, got: ModelRequest) -> str | None:
    """Where request ``got`` first differs from the recorded ``want``, described; or None."""
    for name in ("messages", "tools", "params"):
        found = _path_difference(getattr(want, name), getattr(got, name), name)
        if found:
            where, a, b = found
            if isinstance(a, str) and isinstance(b, str):
                a, b = _around_difference(a, b)
            return f"{where}: recorded {_short(a)}, got {_short(b)}"
    return None


def _around_difference(a: str, b: str, before: int = 30) -> tuple[str, str]:
    """Two texts cut to where they start to differ (a little context kept before it)."""
    common = next((i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), None)
    if common is None:
        common = min(len(a), len(b))
    start = max(0, common - before)
    mark = "..." if start else ""
    return mark + a[start:], mark + b[start:]


def _short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def completion_of(
    turn: Turn, *, id: str, created: int, model: str, finish_reason: str | None = None
) -> dict[str, Any]:
    """``turn`` as an OpenAI ``chat.completion`` object (one choice)."""
    message: dict[str, Any] = {"role": "assistant", "content": turn.content}
    if turn.tool_calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": c.arguments},
            }
            for c in turn.tool_calls
        ]
    elif turn.content is None:
        message["content"] = ""
    reason = finish_reason or ("tool_calls" if turn.tool_calls else "stop")
    prompt, completion = turn.usage.prompt_tokens, turn.usage.completion_tokens
    return {
        "id": id,
        "object": "chat.completion",
        "created": created,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": reason, "logprobs": None}],
        "usage": {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        },
    }


def turn_of(completion: dict[str, Any]) -> Turn:
    """The turn a ``chat.completion`` object holds (its first choice; usage without cost)."""
    message = completion["choices"][0]["message"]
    calls = [
        ToolCall(
            id=str(c.get("id") or f"call_{i}"),
            name=str(c["function"]["name"]),
            arguments=str(c["function"].get("arguments") or "{}"),
        )
        for i, c in enumerate(message.get("tool_calls") or [])
    ]
    usage = completion.get("usage") or {}
    return Turn(
        content=message.get("content"),
        tool_calls=calls,
        usage=Usage(
            prompt_tokens=int(usage.get("prompt_tokens") or 0),
            completion_tokens=int(usage.get("completion_tokens") or 0),
        ),
    )


class ExchangeReplayModel:
    """Serves an episode's recorded exchanges by position (see the module docstring)."""

    def __init__(self, trajectory: Trajectory, *, name: str = "replay") -> None:
        self.trajectory = trajectory
        self.name = name
        self.exchanges = list(trajectory.exchanges)
        self.requests = recorded_requests(self.exchanges)
        self._nodes: dict[int, Node] = {n.id: n for n in trajectory.nodes}
        self._served = 0

    @property
    def params(self) -> dict[str, Any]:
        return {"scenario_id": self.trajectory.scenario_id, "run_id": self.trajectory.run_id}

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        k = self._served
        where = f"replay of {self.trajectory.scenario_id!r} diverged at model request {k + 1}"
        if k >= len(self.exchanges):
            raise ReplayDivergence(
                f"{where}: the recording has {len(self.exchanges)} model request(s)"
            )
        got = ModelRequest(messages=messages, tools=tools, params=dict(params or {}))
        diff = first_difference(self.requests[k], got)
        if diff is not None:
            raise ReplayDivergence(f"{where} of {len(self.exchanges)}: {diff}")
        self._served = k + 1
        exchange = self.exchanges[k]
        node = self._nodes.get(exchange["node"])
        if "error" in exchange:
            raise ModelError(
                f"replayed model failure: {exchange['error']}", kind=exchange.get("kind", "other")
            )
        response = exchange["response"]
        turn = turn_of(response)
        if node is not None:
            turn.usage = node.usage
            turn.latency_ms = node.latency_ms
        turn.raw = {EXCHANGE_RESPONSE: response}
        return turn
