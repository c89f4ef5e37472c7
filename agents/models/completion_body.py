"""What a chat-completion body must be before anything reads it: ``read_completion``.

An endpoint's answer is data from outside. ``checked_completion(body, endpoint)`` takes the raw
bytes of a 200 answer and returns the completion (the parsed object, checked; ``read_completion``
gives it as the ``openai`` package's ``ChatCompletion``), or raises ``EndpointError`` of kind
``malformed``, which the client retries like a 5xx and, when it persists, the loop records as an
infrastructure error (never a harness error, never the agent's). Malformed means any of:

- not UTF-8, not JSON, or nested deeper than ``MAX_DEPTH`` levels;
- not an object, no ``choices`` list with a first choice holding a ``message`` object;
- a ``content`` that is neither text nor null, ``tool_calls`` that are not a list of calls with a
  ``function`` object, a function ``name`` that is not text, ``arguments`` that are neither text,
  nor a JSON object, nor null;
- ``usage`` whose token counts are negative, not whole numbers, or above ``MAX_TOKENS_PER_CALL``
  (such counts would defeat ``--max-tokens`` and the cost).

Tool-call arguments sent as a JSON object instead of a JSON string (several servers do) are
accepted as that object: the call records them as its JSON text, in the order sent.
Imports the error type only; the ``openai`` package when it builds the completion.
"""

from __future__ import annotations

import json
from typing import Any

from agents.models.openai_errors import EndpointError

__all__ = [
    "MAX_DEPTH",
    "MAX_TOKENS_PER_CALL",
    "checked_completion",
    "completion_problem",
    "read_completion",
]

MAX_DEPTH = 64
"""Nesting levels a completion body may have (the mock tool server's limit for its bodies)."""
MAX_TOKENS_PER_CALL = 100_000_000
"""More tokens than any model reads or writes in one call: a count above is no count."""
_TOKEN_FIELDS = ("prompt_tokens", "completion_tokens", "total_tokens")


def _depth_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests deeper than ``limit`` levels (iterative: any depth is safe)."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _call_problem(call: Any) -> str | None:
    if not isinstance(call, dict):
        return "a tool call is not an object"
    function = call.get("function")
    if not isinstance(function, dict):
        return "a tool call has no function object"
    if not isinstance(function.get("name"), str):
        return "a tool call's function name is not text"
    arguments = function.get("arguments")
    if arguments is not None and not isinstance(arguments, (str, dict)):
        return "a tool call's arguments are neither text nor a JSON object"
    return None


def _usage_problem(usage: Any) -> str | None:
    if usage is None:
        return None
    if not isinstance(usage, dict):
        return "usage is not an object"
    for field in _TOKEN_FIELDS:
        count = usage.get(field)
        if count is None:
            continue
        if isinstance(count, bool) or not isinstance(count, int):
            return f"usage.{field} is not a whole number ({count!r})"
        if not 0 <= count <= MAX_TOKENS_PER_CALL:
            return f"usage.{field} is out of range ({count})"
    return None


def completion_problem(body: Any) -> str | None:
    """Why a parsed body is no valid completion (None: it is one)."""
    if not isinstance(body, dict):
        return "the body is not a JSON object"
    if _depth_exceeds(body, MAX_DEPTH):
        return f"the body is nested deeper than {MAX_DEPTH} levels"
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices:
        return "a completion without choices" if not choices else "choices is not a list"
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        return "the first choice has no message object"
    if message.get("content") is not None and not isinstance(message["content"], str):
        return "the message content is neither text nor null"
    calls = message.get("tool_calls")
    if calls is not None and not isinstance(calls, list):
        return "tool_calls is not a list"
    for call in calls or []:
        problem = _call_problem(call)
        if problem:
            return problem
    return _usage_problem(body.get("usage"))


def _arguments_as_text(body: dict[str, Any]) -> None:
    """Tool-call arguments sent as a JSON object become that object's JSON text (as sent)."""
    for call in body["choices"][0]["message"].get("tool_calls") or []:
        function = call["function"]
        if isinstance(function.get("arguments"), dict):
            function["arguments"] = json.dumps(function["arguments"], ensure_ascii=False)


def checked_completion(body: bytes, *, endpoint: str) -> dict[str, Any]:
    """The completion in ``body`` as the parsed JSON object, tool-call arguments as text;
    ``EndpointError`` of kind ``malformed`` saying what is wrong when it is none (see the
    module doc)."""

    def malformed(why: str) -> EndpointError:
        return EndpointError(
            f"{endpoint} returned a body that is not a completion: {why}", kind="malformed"
        )

    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError as e:
        raise malformed(f"not UTF-8 (byte {e.start})") from e
    try:
        parsed = json.loads(text)
    except RecursionError as e:
        raise malformed(f"nested deeper than {MAX_DEPTH} levels") from e
    except ValueError as e:
        raise malformed(f"not JSON ({e}): {text[:80]!r}") from e
    problem = completion_problem(parsed)
    if problem is not None:
        raise malformed(problem)
    _arguments_as_text(parsed)
    return parsed


def read_completion(body: bytes, *, endpoint: str) -> Any:
    """The completion in ``body`` as the ``openai`` package's ``ChatCompletion`` (built from
    ``checked_completion``'s object, without validation)."""
    parsed = checked_completion(body, endpoint=endpoint)
    from openai.types.chat import ChatCompletion  # only where a remote model is used

    return ChatCompletion.construct(**parsed)
