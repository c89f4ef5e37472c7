"""The model protocol: messages and tool schemas in, one assistant ``Turn`` out.

Imports nothing from the project.
"""

from __future__ import annotations

import json
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

Message = dict[str, Any]
"""An OpenAI chat message (``role``, ``content``, ``tool_calls``, ``tool_call_id``...)."""


class ToolCall(BaseModel):
    """A function call as the model wrote it. ``arguments`` is the raw text, kept verbatim."""

    id: str
    name: str
    arguments: str = "{}"

    def parsed_args(self) -> dict[str, Any]:
        """The arguments as a dict; raises ``ValueError`` with a readable reason otherwise.

        Raw control characters inside strings are accepted (``strict=False``, as ToolBench
        parses arguments). What JSON itself does not allow, or no tool could take, is the model's
        malformed call too: ``NaN`` and ``Infinity``, numbers too long to read, nesting deeper
        than ``MAX_ARGUMENT_DEPTH``, text with unpaired surrogates."""
        text = (self.arguments or "").strip() or "{}"
        try:
            value = json.loads(text, strict=False, parse_constant=_no_constant)
        except json.JSONDecodeError as e:
            raise ValueError(f"arguments are not valid JSON: {e.msg} at char {e.pos}") from e
        except RecursionError:
            raise ValueError("arguments are nested too deeply to read") from None
        except ValueError as e:  # NaN / Infinity, or an integer with too many digits
            raise ValueError(f"arguments are not valid JSON: {str(e).split(';')[0]}") from None
        if not isinstance(value, dict):
            raise ValueError(f"arguments must be a JSON object, got {type(value).__name__}")
        check_json_value(value)
        return value


MAX_ARGUMENT_DEPTH = 64
"""Nesting (objects and arrays) a tool call's arguments may have."""

MAX_REPLY_BYTES = 256 * 1024
"""The default cap on a model reply (a completion's body, in bytes; ``agents.models.
reply_limit``): 256 KiB, some 60,000 tokens of text, well above what a chat model's turn holds."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def check_json_value(value: Any, max_depth: int = MAX_ARGUMENT_DEPTH) -> None:
    """``ValueError`` when ``value`` nests deeper than ``max_depth`` or holds a string with an
    unpaired surrogate (text no file or server can carry). Iterative: any depth is safe."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                raise ValueError(f"arguments are nested deeper than {max_depth} levels")
            children = item.items() if isinstance(item, dict) else enumerate(item)
            for key, child in children:
                if isinstance(key, str):
                    stack.append((key, depth))
                stack.append((child, depth + 1))
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("arguments hold text with an unpaired surrogate") from None


CUT_AT_TOKEN_LIMIT = 'the reply was cut at the token limit (finish_reason "length")'
"""How a ``format_error`` starts when the endpoint stopped the reply at ``max_tokens``."""


class Usage(BaseModel):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            cost=self.cost + other.cost,
        )


class Turn(BaseModel):
    """One assistant turn."""

    content: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    latency_ms: float = 0.0
    retries: int = Field(
        default=0, ge=0, description="Failed attempts the client retried before this turn."
    )
    format_error: str | None = Field(
        default=None, description="Set by text adapters when the turn could not be parsed."
    )
    raw: Any = Field(default=None, description="The provider's raw response, for debugging.")


@runtime_checkable
class Model(Protocol):
    """Anything that can produce the next assistant turn."""

    name: str

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn: ...
