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
recorded by. Imports ``agents.model`` only.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal, Protocol, get_args, runtime_checkable

from pydantic import BaseModel, Field

from agents.model import Message, Usage

__all__ = [
    "USER_SIGNALS",
    "UserSource",
    "User",
    "UserSignal",
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

    def record(self) -> dict[str, Any]:
        """The turn as a trajectory node keeps it (its text is the node's content)."""
        return self.model_dump(mode="json", exclude={"content", "usage"}, exclude_defaults=True)


@runtime_checkable
class User(Protocol):
    """A user of a conversation. ``hidden`` names the functions not offered to the agent until a
    turn reveals them; ``max_turns`` bounds how often the user answers (None: the budget's)."""

    name: str
    hidden: list[str]

    async def reply(self, transcript: list[Message]) -> UserTurn:
        """The user's answer to the last reply of ``transcript``."""
        ...


def transcript_key(transcript: list[Message]) -> str:
    """The digest of a transcript (roles and texts, in order): what users are recorded by."""
    canonical = json.dumps(
        [[m.get("role"), m.get("content") or ""] for m in transcript],
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


async def ask_user(user: User, transcript: list[Message]) -> UserTurn:
    """``user``'s answer to ``transcript``; an exception the user raised (its own bug, its
    endpoint) is its failure (``user_error``), never the harness's."""
    try:
        return await user.reply(transcript)
    except Exception as e:
        return UserTurn(source="live", failure=f"user_error: {type(e).__name__}: {e}")


def failure_kind(turn: UserTurn) -> str:
    """The kind a user failure is labelled with (``empty``, ``user_miss``...): its text up to
    the first colon; the episode's end reason is ``user_failure:<kind>``."""
    return (turn.failure or "").split(":", 1)[0].strip() or "failure"
