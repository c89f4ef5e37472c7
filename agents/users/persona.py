"""``PersonaUserModel``: a deterministic, offline player of a persona (the CI default user), and
``ScriptedUserModel``: the lines of a task's script, one per reply of the agent.

Both are ``Model``s a ``ModelUser`` asks as it asks any user model: the request is the user's
side of the conversation (the agent's replies are its ``user`` messages) and ending the
conversation is a call of ``end_conversation``. They read the request alone, so the same
transcript gets the same answer.

The persona player reads only the agent's last reply (and its own tools' results) and answers
by these rules, in order:

0. dual control: when its request ends with the results of its own tools' calls, it reports
   them (``Done. toggle roaming: {...}.``); when the agent's reply asks (with a ``?``) for a
   call of the persona's ``act`` whose tool it is offered (matched as ``accept`` patterns are,
   below) and that it has not made yet in the conversation, it makes every such call, in order;
1. the reply asks for something the persona knows (a ``known`` fact whose name, with ``_`` read
   as a space, appears in the reply, which holds a ``?``): the user tells every such fact
   (``My order id is O-1002.``);
2. the reply proposes an action (it holds a ``?`` and one of the phrases of ``PROPOSALS``): the
   user agrees when an ``accept`` pattern matches (every word of its tool's name starts a word of
   the reply, and every argument value appears in it), refuses when a ``refuse`` pattern matches
   or none does (``No, please don't do that.``);
3. any other question: the user says it does not know (``unknown``), never inventing a fact;
4. no question: the user is done and ends the conversation (``done``).

Matching ignores case. The scripted player says its k-th line after the agent's k-th reply and
ends the conversation (``done``) after a reply to its last line. Imports the agents' model
records only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from agents.model import Message, ToolCall, Turn

__all__ = [
    "AGREE",
    "DONE",
    "PROPOSALS",
    "REFUSE",
    "UNSURE",
    "PersonaUserModel",
    "ScriptedUserModel",
    "end_turn",
]

PROPOSALS = (
    "shall i",
    "should i",
    "do you want me to",
    "would you like me to",
    "can i",
    "may i",
    "confirm",
    "proceed",
    "go ahead",
)
AGREE = "Yes, please go ahead."
REFUSE = "No, please don't do that."
UNSURE = "I'm sorry, I don't know that."
DONE = "Thank you, that is all."


def _words(name: str) -> str:
    return name.replace("_", " ").lower()


def end_turn(message: str = DONE, reason: str = "done") -> Turn:
    """A user turn that ends the conversation (a call of ``end_conversation``)."""
    args = json.dumps({"reason": reason, "message": message})
    return Turn(tool_calls=[ToolCall(id="end", name="end_conversation", arguments=args)])


def _agent_replies(messages: list[Message]) -> list[str]:
    """The agent's replies in a user model's request (its ``user`` messages)."""
    return [m.get("content") or "" for m in messages if m.get("role") == "user"]


@dataclass
class PersonaUserModel:
    """The persona player (see the module docstring)."""

    known: dict[str, str]
    accept: list[dict[str, Any]] = field(default_factory=list)
    """Action patterns (``{api, args}``) the user agrees to."""
    refuse: list[dict[str, Any]] = field(default_factory=list)
    act: list[dict[str, Any]] = field(default_factory=list)
    """Calls of its own tools (``{api, args}``) it makes when asked (dual control)."""
    name: str = "persona-user"

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        if messages and messages[-1].get("role") == "tool":
            return Turn(content=_report(messages))
        replies = _agent_replies(messages)
        text = " ".join((replies[-1] if replies else "").lower().split())
        if "?" not in text:
            return end_turn()
        calls = self._asked_calls(text, messages, tools)
        if calls:
            return Turn(tool_calls=calls)
        asked = [(k, v) for k, v in self.known.items() if _words(k) in text]
        if asked:
            return Turn(content=" ".join(f"My {_words(k)} is {v}." for k, v in asked))
        if any(p in text for p in PROPOSALS):
            if any(_proposed(p, text) for p in self.refuse):
                return Turn(content=REFUSE)
            if any(_proposed(p, text) for p in self.accept):
                return Turn(content=AGREE)
            return Turn(content=REFUSE)
        return Turn(content=UNSURE)

    def _asked_calls(
        self, text: str, messages: list[Message], tools: list[dict[str, Any]]
    ) -> list[ToolCall]:
        """The ``act`` calls the reply asks for, offered and not made yet (rule 0)."""
        offered = {f.get("function", {}).get("name") for f in tools}
        made = {
            (c["function"]["name"], _canonical(c["function"].get("arguments")))
            for m in messages
            if m.get("role") == "assistant"
            for c in m.get("tool_calls") or []
        }
        out: list[ToolCall] = []
        for p in self.act:
            api, args = str(p.get("api", "")), dict(p.get("args") or {})
            arguments = json.dumps(args, sort_keys=True)
            if api in offered and (api, _canonical(arguments)) not in made and _proposed(p, text):
                out.append(
                    ToolCall(id=f"act-{len(made) + len(out) + 1}", name=api, arguments=arguments)
                )
        return out


def _canonical(arguments: Any) -> str:
    try:
        return json.dumps(json.loads(arguments or "{}"), sort_keys=True)
    except (TypeError, ValueError):
        return str(arguments)


def _report(messages: list[Message]) -> str:
    """What the user says after its own calls: each call's tool and what it returned."""
    results = []
    for m in reversed(messages):
        if m.get("role") != "tool":
            break
        results.append(m)
    parts = []
    for m in reversed(results):
        try:
            data = json.loads(m.get("content") or "")
        except ValueError:
            data = None
        name = _words(str(m.get("name") or "my phone"))
        if isinstance(data, dict) and data.get("error"):
            parts.append(f"{name} failed: {data['error']}")
        else:
            shown = data.get("response") if isinstance(data, dict) else m.get("content")
            parts.append(f"{name}: {json.dumps(shown, ensure_ascii=False, sort_keys=True)}")
    return "Done. " + "; ".join(parts) + "."


@dataclass
class ScriptedUserModel:
    """The scripted player (see the module docstring)."""

    lines: list[str]
    name: str = "scripted-user"

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        k = len(_agent_replies(messages))
        if 1 <= k <= len(self.lines):
            return Turn(content=self.lines[k - 1])
        return end_turn()


def _proposed(pattern: dict[str, Any], text: str) -> bool:
    """Whether a reply proposes the action of ``pattern``: every word of its tool's name starts
    a word of the reply (``cancel order``: "cancel your order"), and every argument value
    appears in it."""
    words = _words(str(pattern.get("api", ""))).split()
    if not words or not all(re.search(r"\b" + re.escape(w), text) for w in words):
        return False
    values = [str(v).lower() for v in (pattern.get("args") or {}).values()]
    return all(v in text for v in values)
