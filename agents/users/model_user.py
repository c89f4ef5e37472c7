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
contradiction of its instructions).

Dual control: given ``UserTools`` (the episode's world has user tools), the user model is also
offered them. A turn that calls them has the calls run, in order, on the episode's state, their
results added to the request, and the model asked again, up to ``MAX_TOOL_ROUNDS`` times; the
turn's text after that is the user's message (``too_many_calls`` past the limit). A call of a
function it was not offered is ``unknown_tool``; arguments that are not a JSON object are answered
with an error and not sent. ``made``: calls already made for this turn (a recorded turn whose
replay diverged), shown to the model as done. Imports the agents' model, trajectory and user
records only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from agents.errors import ModelError
from agents.model import Message, Model, ToolCall, Turn, Usage
from agents.toolenv import Observation
from agents.trajectory import StepCall, user_call_messages
from agents.user import USER_SIGNALS, UserSource, UserTools, UserTurn

__all__ = ["END_CONVERSATION", "MAX_TOOL_ROUNDS", "ModelUser", "persona_prompt", "run_user_call"]

MAX_TOOL_ROUNDS = 8
"""How often a user model may call its own tools before it answers, in one turn."""

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
            if m.get("role") == "tool":  # a result of its own tool (dual control)
                flipped.append(dict(m))
                continue
            role = "user" if m.get("role") == "assistant" else "assistant"
            out: Message = {"role": role, "content": m.get("content") or ""}
            if m.get("tool_calls"):
                out["tool_calls"] = m["tool_calls"]
            flipped.append(out)
        return flipped

    def _source(self, turn: Turn) -> UserSource:
        """Where a turn came from: a live user's turn the model cache answered is ``cache``."""
        hit = isinstance(turn.raw, dict) and turn.raw.get("cache") == "hit"
        return "cache" if hit and self.source == "live" else self.source

    async def reply(
        self,
        transcript: list[Message],
        tools: UserTools | None = None,
        *,
        made: list[StepCall] | None = None,
    ) -> UserTurn:
        messages = self.request(transcript)
        offered = [END_CONVERSATION, *(tools.functions if tools is not None else [])]
        names = {f["function"]["name"] for f in offered[1:]}
        calls: list[StepCall] = list(made or [])
        messages.extend(_flipped(user_call_messages(calls)))
        usage = Usage()
        rounds = 0
        while True:
            try:
                turn = await self.model.complete(messages, offered)
            except ModelError as e:
                return UserTurn(
                    source=self.source,
                    failure=f"model_error: {e.kind}: {e}",
                    usage=usage,
                    calls=calls,
                )
            usage = usage + turn.usage
            own = [c for c in turn.tool_calls if c.name != END_CONVERSATION["function"]["name"]]
            if not own:
                break
            source = self._source(turn)
            unknown = next((c.name for c in own if c.name not in names), None)
            if unknown is not None or tools is None:
                return UserTurn(
                    content=(turn.content or "").strip(),
                    source=source,
                    failure=f"unknown_tool: {unknown}",
                    usage=usage,
                    calls=calls,
                )
            rounds += 1
            if rounds > MAX_TOOL_ROUNDS:
                return UserTurn(
                    source=source,
                    failure=f"too_many_calls: the user called its tools in more than "
                    f"{MAX_TOOL_ROUNDS} rounds without answering",
                    usage=usage,
                    calls=calls,
                )
            now = [await run_user_call(tools, c) for c in own]
            calls.extend(now)
            messages.extend(_flipped(user_call_messages(now, turn.content or "")))
            if any(c.observation is not None and c.observation.infra for c in now):
                return UserTurn(source=source, usage=usage, calls=calls)  # the step stops
            if len(own) == len(turn.tool_calls):
                continue
            turn = turn.model_copy(
                update={"tool_calls": [c for c in turn.tool_calls if c not in own]}
            )
            break
        turn = turn.model_copy(update={"usage": usage})
        source = self._source(turn)
        text = (turn.content or "").strip()
        signal = None
        for call in turn.tool_calls:  # end_conversation only, by now
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
                    calls=calls,
                )
            signal = reason
            extra = args.get("message") if isinstance(args.get("message"), str) else ""
            text = text or extra.strip()
        if not text and signal is None:
            return UserTurn(
                source=source,
                failure="empty: the user model answered nothing",
                usage=turn.usage,
                calls=calls,
            )
        leaked = [u for u in self.unknown if u and u.lower() in text.lower()]
        if leaked:
            return UserTurn(
                content=text,
                source=source,
                failure=f"leaked: said {leaked[0]!r}, which the persona does not know",
                usage=turn.usage,
                calls=calls,
            )
        k = sum(1 for m in transcript if m.get("role") == "assistant")
        reveal = self.reveals[k - 1] if 0 < k <= len(self.reveals) and signal is None else []
        return UserTurn(
            content=text,
            signal=signal,
            reveal=list(reveal),
            source=source,
            usage=turn.usage,
            calls=calls,
        )


async def run_user_call(tools: UserTools, call: ToolCall) -> StepCall:
    """One call of the user's own tool: sent when its arguments are a JSON object, else
    answered with an error (not sent, as an agent's would be)."""
    why = "not a JSON object"
    try:
        args = json.loads(call.arguments or "{}")
    except ValueError:
        args = None
    except RecursionError:  # the model's own text: an answer, never its failure
        args, why = None, "nested too deeply for JSON"
    if isinstance(args, dict):
        obs = await tools.call(call.name, args)
    else:
        args = None
        shown = _shortened(call.arguments or "")
        message = f"the arguments of {call.name} are {why}: {shown!r}"
        content = json.dumps({"error": message, "response": ""})
        obs = Observation(ok=False, content=content, provenance="invalid", error=message)
    return StepCall(
        id=call.id,
        name=call.name,
        arguments=call.arguments,
        function=call.name,
        args=args,
        observation=obs,
    )


def _shortened(text: str, limit: int = 200) -> str:
    """``text`` cut to ``limit`` characters for an error message (the model's arguments may
    be of any size)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _flipped(messages: list[Message]) -> list[Message]:
    """The user's own call messages of a transcript as its model's request has them (its
    messages are the request's ``assistant`` ones)."""
    return [{**m, "role": "assistant"} if m.get("role") == "user" else m for m in messages]
