"""The user of a conversation: who answers the agent's replies, and how a conversation ends.

In a conversation (a tool env with a ``user``), whatever the agent says without calling a
function, and the ``final_answer`` of a ``Finish(give_answer)``, is its **reply** to the user.
The user answers with a ``UserTurn``: a message, and possibly a **signal** that ends the
conversation (``done``: the user is satisfied; ``transfer``: they want a human; ``out_of_scope``:
they asked for something this service does not do), functions it **reveals** from that turn on
(BFCL's missed functions), and, when the user itself failed, a **failure** (the user model
errored, answered nothing, contradicted its instructions or left its script): an episode a user
failure ends is the user's, left out of the agent's pass rate and counted apart.

A user answers from the **transcript** it has seen (the first user message, then the agent's
replies and its own answers, in order), never from hidden state: the same transcript gets the
same answer, so a recorded user replays byte for byte and a search may return to an earlier turn
and meet the same user there. ``transcript_key`` is the transcript's digest, the key users are
recorded by.

**Dual control** (τ²'s telecom): a world may give the user tools of its own (its phone). The
user of such an episode is handed ``UserTools``: the functions it may call and a way to call
them on the episode's session. The calls it makes before it answers are the turn's ``calls``
(recorded on its ``user`` node, so the state after them is the node's and a search that comes
back to the node finds it there); in its later transcripts they appear as its own messages with
``tool_calls``, followed by their results. The agent never sees them. Imports ``agents.model``,
``agents.toolenv`` and ``agents.trajectory``'s call record.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from pydantic import BaseModel, Field

from agents.model import Message, Usage
from agents.toolenv import Observation
from agents.trajectory import StepCall

__all__ = [
    "USER_SIGNALS",
    "UserSource",
    "User",
    "UserSignal",
    "UserTools",
    "UserTurn",
    "ask_user",
    "failure_kind",
    "transcript_key",
]

UserSignal = Literal["done", "transfer", "out_of_scope"]
USER_SIGNALS: tuple[UserSignal, ...] = get_args(UserSignal)

UserSource = Literal["script", "persona", "live", "record", "cache", "replay"]
"""Where a user turn came from: the task's script, the offline persona player, the user model
asked now, the record of earlier runs, the model cache, or a replayed trajectory."""


class UserTurn(BaseModel):
    """What the user said after one of the agent's replies (see the module docstring)."""

    content: str = ""
    signal: UserSignal | None = Field(
        default=None, description="The user ended the conversation, and how."
    )
    reveal: list[str] = Field(
        default_factory=list, description="Functions offered to the agent from this turn on."
    )
    source: UserSource = "script"
    failure: str | None = Field(
        default=None,
        description="The user failed (kind: message): the episode ends as the user's failure.",
    )
    usage: Usage = Field(default_factory=Usage)
    calls: list[StepCall] = Field(
        default_factory=list,
        description="Dual control: the calls of its own tools the user made before it "
        "answered, with what they returned (the user node's calls).",
    )

    def record(self) -> dict[str, Any]:
        """The turn as a trajectory node keeps it (its text is the node's content, its calls
        the node's calls)."""
        return self.model_dump(
            mode="json", exclude={"content", "usage", "calls"}, exclude_defaults=True
        )


@runtime_checkable
class UserTools(Protocol):
    """The user's own tools in one episode (dual control): what it is offered (OpenAI's
    function shape) and its calls of them on the episode's state."""

    @property
    def functions(self) -> list[dict[str, Any]]: ...

    async def call(self, name: str, args: dict[str, Any]) -> Observation: ...


@runtime_checkable
class User(Protocol):
    """A user of a conversation. ``hidden`` names the functions not offered to the agent until a
    turn reveals them; ``max_turns`` bounds how often the user answers (None: the budget's)."""

    name: str
    hidden: list[str]

    async def reply(self, transcript: list[Message]) -> UserTurn:
        """The user's answer to the last reply of ``transcript``. A user that can act on its
        own tools also takes ``tools: UserTools`` as a keyword (``ask_user`` passes it only
        when the episode's world has user tools)."""
        ...


def transcript_key(transcript: list[Message]) -> str:
    """The digest of a transcript (roles and texts, in order): what users are recorded by."""
    canonical = json.dumps(
        [_key_entry(m) for m in transcript], ensure_ascii=False, separators=(",", ":")
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def _key_entry(m: Message) -> list[Any]:
    """A message as the key reads it: role and text, and the calls of a user's message that
    made some (dual control; a message without calls keys as it always did)."""
    entry: list[Any] = [m.get("role"), m.get("content") or ""]
    calls = m.get("tool_calls")
    if calls:
        entry.append([[c["function"]["name"], c["function"].get("arguments") or ""] for c in calls])
    return entry


async def ask_user(
    user: User, transcript: list[Message], tools: UserTools | None = None
) -> UserTurn:
    """``user``'s answer to ``transcript`` (its own ``tools`` passed when it has some); an
    exception the user raised (its own bug, its endpoint) is its failure (``user_error``),
    never the harness's."""
    try:
        if tools is None:
            return await user.reply(transcript)
        return await user.reply(transcript, tools=tools)  # type: ignore[call-arg]
    except Exception as e:
        return UserTurn(source="live", failure=f"user_error: {type(e).__name__}: {e}")


def failure_kind(turn: UserTurn) -> str:
    """The kind a user failure is labelled with (``empty``, ``user_miss``...): its text up to
    the first colon; the episode's end reason is ``user_failure:<kind>``."""
    return (turn.failure or "").split(":", 1)[0].strip() or "failure"
