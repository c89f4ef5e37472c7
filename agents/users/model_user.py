"""``ModelUser``: a user played by any ``Model`` (an LLM alias, a fake endpoint, a replay).

The user model is asked with a system prompt made from the persona (``persona_prompt``: the
scenario, what the user knows and does not know, the instructions) and the transcript seen from
the user's side: the agent's replies are the ``user`` messages of that request and the user's
own earlier messages its ``assistant`` messages. It is offered one function,
``end_conversation(reason)``, with ``reason`` one of ``done``, ``transfer``, ``out_of_scope``:
the typed signal that ends the conversation (a magic string in the text ends nothing). The
turn's text is the user's message.

User failures (``UserTurn.failure``, the episode is then the user's and not the agent's):
``model_error`` (the user model's call failed after its retries), ``empty`` (no text and no
signal), ``unknown_tool`` (a call of a function it was not offered, or a bad reason),
``leaked`` (its message states a fact the persona lists as unknown to it: a documented
contradiction of its instructions). Imports the agents' model and user records only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agents.errors import ModelError
from agents.model import Message, Model, Turn
from agents.user import USER_SIGNALS, UserSource, UserTurn

__all__ = ["END_CONVERSATION", "ModelUser", "persona_prompt"]

END_CONVERSATION: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "end_conversation",
        "description": (
            "End the conversation: 'done' when what you wanted is done (or you are satisfied), "
            "'transfer' to ask for a human agent, 'out_of_scope' when the agent cannot help "
            "with what you want."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "reason": {"type": "string", "enum": list(USER_SIGNALS)},
                "message": {"type": "string", "description": "A last message, if any."},
            },
            "required": ["reason"],
        },
    },
}


def persona_prompt(
    scenario: str, known: dict[str, str], unknown: list[str], instructions: str
) -> str:
    """The user model's system prompt (the project's own wording)."""
    facts = "\n".join(f"- {k.replace('_', ' ')}: {v}" for k, v in known.items()) or "- (none)"
    gaps = "\n".join(f"- {u}" for u in unknown) or "- (nothing in particular)"
    return (
        "You play a customer talking to a support agent. Stay in your role: write only what "
        "the customer says, briefly, one message at a time.\n\n"
        f"Who you are and what you want:\n{scenario}\n\n"
        f"What you know (say it when asked):\n{facts}\n\n"
        f"What you do not know (never make it up; say you do not know):\n{gaps}\n\n"
        f"How to behave:\n{instructions}\n\n"
        "When what you wanted is done, or the agent cannot help, call end_conversation with "
        "the reason instead of writing a message."
    )


@dataclass
class ModelUser:
    model: Model
    prompt: str
    unknown: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    reveals: list[list[str]] = field(default_factory=list)
    """The functions the user reveals with its k-th answer (a task script's ``reveal``)."""
    name: str = ""
    source: UserSource = "live"
    """What its turns are marked as coming from (``script``, ``persona`` for offline players)."""

    def __post_init__(self) -> None:
        self.name = self.name or getattr(self.model, "name", "user-model")

    def request(self, transcript: list[Message]) -> list[Message]:
        """The user model's request: its persona, then the transcript from its side."""
        flipped: list[Message] = [{"role": "system", "content": self.prompt}]
        for i, m in enumerate(transcript):
            if i == 0:  # the user's first message: what it opened with
                flipped.append({"role": "assistant", "content": m.get("content") or ""})
                continue
            role = "user" if m.get("role") == "assistant" else "assistant"
            flipped.append({"role": role, "content": m.get("content") or ""})
        return flipped

    def _source(self, turn: Turn) -> UserSource:
        """Where a turn came from: a live user's turn the model cache answered is ``cache``."""
        hit = isinstance(turn.raw, dict) and turn.raw.get("cache") == "hit"
        return "cache" if hit and self.source == "live" else self.source

    async def reply(self, transcript: list[Message]) -> UserTurn:
        try:
            turn = await self.model.complete(self.request(transcript), [END_CONVERSATION])
        except ModelError as e:
            return UserTurn(source=self.source, failure=f"model_error: {e.kind}: {e}")
        source = self._source(turn)
        text = (turn.content or "").strip()
        signal = None
        for call in turn.tool_calls:
            if call.name != END_CONVERSATION["function"]["name"]:
                return UserTurn(
                    content=text,
                    source=source,
                    failure=f"unknown_tool: {call.name}",
                    usage=turn.usage,
                )
            try:
                args = json.loads(call.arguments or "{}")
            except ValueError:
                args = {}
            reason = args.get("reason") if isinstance(args, dict) else None
            if reason not in USER_SIGNALS:
                return UserTurn(
                    content=text,
                    source=source,
                    failure=f"unknown_tool: end_conversation reason {reason!r}",
                    usage=turn.usage,
                )
            signal = reason
            extra = args.get("message") if isinstance(args.get("message"), str) else ""
            text = text or extra.strip()
        if not text and signal is None:
            return UserTurn(
                source=source,
                failure="empty: the user model answered nothing",
                usage=turn.usage,
            )
        leaked = [u for u in self.unknown if u and u.lower() in text.lower()]
        if leaked:
            return UserTurn(
                content=text,
                source=source,
                failure=f"leaked: said {leaked[0]!r}, which the persona does not know",
                usage=turn.usage,
            )
        k = sum(1 for m in transcript if m.get("role") == "assistant")
        reveal = self.reveals[k - 1] if 0 < k <= len(self.reveals) and signal is None else []
        return UserTurn(
            content=text, signal=signal, reveal=list(reveal), source=source, usage=turn.usage
        )
