"""How the history travels to a chat endpoint: the ``openai`` shape or ToolBench's.

The ``openai`` shape is ``agents.models.openai_compat.to_openai_messages`` (strict: tool results
without their function name, an assistant turn without text sent with empty content).
``to_toolbench_messages`` is the ``toolbench`` shape: the messages as ToolBench's client (and
StableToolBench's) sends them back to the endpoint, which is the message the API returned plus
one tool message per call:

- an assistant turn that only called functions has ``content: null``;
- a tool result is ``{"role": "tool", "name", "content", "tool_call_id"}``, ``name`` being the
  function called (``invalid_hallucination_function_name`` for an invented one, which the
  trajectory's history already shows).

Imports ``agents.model`` only.
"""

from __future__ import annotations

from typing import Literal, get_args

from agents.model import Message

__all__ = ["MESSAGE_SHAPES", "MessageShape", "to_toolbench_messages"]

MessageShape = Literal["openai", "toolbench"]
MESSAGE_SHAPES: tuple[MessageShape, ...] = get_args(MessageShape)


def to_toolbench_messages(messages: list[Message]) -> list[Message]:
    """The history in ToolBench's shape (see the module docstring)."""
    out: list[Message] = []
    for m in messages:
        role = m.get("role")
        if role == "tool":
            msg: Message = {
                "role": "tool",
                "name": m.get("name") or "",
                "content": m.get("content") or "",
                "tool_call_id": m.get("tool_call_id"),
            }
        elif role == "assistant" and m.get("tool_calls"):
            msg = {"role": "assistant", "content": m.get("content") or None}
            msg["tool_calls"] = m["tool_calls"]
        elif role == "assistant":
            msg = {"role": "assistant", "content": m.get("content") or ""}
        else:
            msg = dict(m)
        out.append(msg)
    return out
