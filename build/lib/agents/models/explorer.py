"""The ``explorer`` offline model: calls each offered tool once, then answers with what it saw.

A smoke-test baseline for suites without reference paths (an import of StableToolBench's
queries, say), not a strong agent: it needs no endpoint and no reference, and it is
deterministic, so a whole run can be made and replayed offline. At each request it calls the
first offered function it has not called yet, with arguments filled from the function's JSON
Schema: for each required parameter (and each optional one with a default) the default, else the
first enum value, else the first example, else a value of the same name seen in an earlier
observation (ids found on the way), else one read from the query (a number, a quoted or
capitalised phrase), else a placeholder of the parameter's type. With every function called it
finishes, its answer a short digest of the observations. Imports ``agents.model``,
``agents.models.history``, ``agents.models.reference`` and ``agents.toolenv`` only.
"""

from __future__ import annotations

import json
import re
from typing import Any

from agents.model import Message, ToolCall, Turn
from agents.models.history import history_calls
from agents.models.reference import estimate_usage, finish_args, next_call_id
from agents.toolenv import FINISH, GIVE_ANSWER

__all__ = ["ExplorerModel", "fill_arguments"]

ANSWER_CHARS = 1500
_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
_QUOTED = re.compile(r"['\"“”‘’]([^'\"“”‘’]{1,80})['\"“”‘’]")
_CAPITALISED = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][\w-]*(?:\s+[A-Z][\w-]*)*)")


def _seen(messages: list[Message]) -> dict[str, Any]:
    """Scalar values by key name, from every JSON observation of the history (the first wins)."""
    seen: dict[str, Any] = {}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if isinstance(v, (str, int, float)) and not isinstance(v, bool):
                    seen.setdefault(str(k).lower(), v)
                walk(v)
        elif isinstance(value, list):
            for item in value[:20]:
                walk(item)

    for m in messages:
        if m.get("role") != "tool":
            continue
        try:
            walk(json.loads(m.get("content") or ""))
        except (json.JSONDecodeError, RecursionError):
            continue
    return seen


def _from_query(query: str, kind: str) -> Any:
    if kind in ("integer", "number"):
        found = _NUMBER.search(query)
        if found:
            value = float(found.group())
            return int(value) if kind == "integer" or value.is_integer() else value
        return None
    quoted = _QUOTED.search(query)
    if quoted:
        return quoted.group(1).strip()
    capitalised = _CAPITALISED.search(query)
    return capitalised.group(1) if capitalised else None


def _placeholder(kind: str) -> Any:
    return {
        "integer": 1,
        "number": 1.0,
        "boolean": True,
        "array": [],
        "object": {},
    }.get(kind, "example")


def _type(schema: dict[str, Any]) -> str:
    t = schema.get("type")
    if isinstance(t, list):
        t = next((x for x in t if x != "null"), "string")
    return t if isinstance(t, str) else "string"


def fill_arguments(parameters: dict[str, Any], query: str, seen: dict[str, Any]) -> dict[str, Any]:
    """Arguments for a JSON Schema of parameters (see the module docstring for the order)."""
    props = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    args: dict[str, Any] = {}
    for name, schema in props.items():
        if not isinstance(schema, dict):
            continue
        if name not in required and "default" not in schema:
            continue
        kind = _type(schema)
        if "default" in schema:
            value = schema["default"]
        elif schema.get("enum"):
            value = schema["enum"][0]
        elif schema.get("examples"):
            value = schema["examples"][0]
        elif "example" in schema:
            value = schema["example"]
        else:
            value = _match_seen(name, seen)
            if value is None:
                value = _from_query(query, kind)
            if value is None:
                value = _placeholder(kind)
        args[name] = value
    return args


def _match_seen(name: str, seen: dict[str, Any]) -> Any:
    key = name.lower()
    if key in seen:
        return seen[key]
    for seen_key, value in seen.items():
        if seen_key.endswith(key) or key.endswith(seen_key):
            return value
    return None


def _digest(messages: list[Message]) -> str:
    parts = []
    for call, result in zip(history_calls(messages), _tool_results(messages), strict=False):
        parts.append(f"{call.name}: {result}")
    text = "; ".join(parts) or "no tool answered"
    return "Here is what the tools returned. " + text[:ANSWER_CHARS]


def _tool_results(messages: list[Message]) -> list[str]:
    return [str(m.get("content") or "") for m in messages if m.get("role") == "tool"]


class ExplorerModel:
    """See the module docstring. Stateless: the request's history says what was called."""

    def __init__(self, *, name: str = "explorer") -> None:
        self.name = name

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        called = {c.name for c in history_calls(messages)}
        query = next((str(m.get("content") or "") for m in messages if m["role"] == "user"), "")
        call_id = next_call_id(messages)
        turn: Turn | None = None
        for tool in tools:
            fn = tool.get("function", tool)
            name = str(fn.get("name"))
            if name == FINISH or name in called:
                continue
            args = fill_arguments(fn.get("parameters") or {}, query, _seen(messages))
            turn = Turn(
                content=f"Let me try {name}.",
                tool_calls=[ToolCall(id=call_id, name=name, arguments=json.dumps(args))],
            )
            break
        if turn is None:
            answer = finish_args(GIVE_ANSWER, _digest(messages))
            turn = Turn(
                content="I have tried every tool.",
                tool_calls=[ToolCall(id=call_id, name=FINISH, arguments=answer)],
            )
        turn.usage = estimate_usage(messages, tools, turn)
        return turn
