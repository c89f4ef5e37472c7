"""Reading a request's history: the assistant turns in it, their calls, and a stable digest.

Offline models decide from the request alone (no hidden conversation state), so a model instance
can serve any branch of a DFSDT tree, and a run can be replayed from its trajectory.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from agents.model import Message


@dataclass(frozen=True)
class HistoryCall:
    name: str
    arguments: str


@dataclass(frozen=True)
class HistoryTurn:
    """One assistant message of a request: its text and its calls (ids left out)."""

    content: str
    calls: tuple[HistoryCall, ...]

    def describe(self) -> str:
        calls = ", ".join(f"{c.name}({c.arguments})" for c in self.calls) or "no call"
        text = self.content if len(self.content) <= 60 else self.content[:57] + "..."
        return f"{calls} / content {text!r}"


def turn_of(message: Message) -> HistoryTurn:
    calls = tuple(
        HistoryCall(
            name=str(tc.get("function", {}).get("name", "")),
            arguments=str(tc.get("function", {}).get("arguments") or ""),
        )
        for tc in message.get("tool_calls") or []
    )
    return HistoryTurn(content=message.get("content") or "", calls=calls)


def assistant_turns(messages: list[Message]) -> list[HistoryTurn]:
    """The assistant messages of a request, in order (system/user/tool messages skipped)."""
    return [turn_of(m) for m in messages if m.get("role") == "assistant"]


def history_calls(messages: list[Message]) -> list[HistoryCall]:
    """Every tool call the assistant made in the request's history, in order."""
    return [c for t in assistant_turns(messages) for c in t.calls]


def call_results(messages: list[Message]) -> list[tuple[HistoryCall, str | None]]:
    """Every tool call of the history with the text of the tool message that answered it
    (matched by call id; None when no tool message answers it)."""
    answers = {
        m.get("tool_call_id"): str(m.get("content") or "")
        for m in messages
        if m.get("role") == "tool"
    }
    out: list[tuple[HistoryCall, str | None]] = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        turn = turn_of(m)
        for tc, call in zip(m.get("tool_calls") or [], turn.calls, strict=True):
            out.append((call, answers.get(tc.get("id"))))
    return out


def parse_json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text or "{}")
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def history_digest(messages: list[Message]) -> str:
    """A digest of the position in the tree: the assistant turns and tool results so far.

    System and user messages (prompt, feedback, DFSDT's diversity prompt) and call ids are left
    out, so the same state reached with a different extra prompt has the same digest.
    """
    items: list[Any] = []
    for m in messages:
        role = m.get("role")
        if role == "assistant":
            t = turn_of(m)
            items.append(["a", t.content, [[c.name, c.arguments] for c in t.calls]])
        elif role == "tool":
            items.append(["t", m.get("content") or ""])
    blob = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()
