"""What a task says about its user: a script of turns, or a persona a user model plays.

A task with ``user:`` is a conversation (docs/conversations.md): the task's ``query`` is the
user's first message; after each reply of the agent the user answers, until the user ends the
conversation or a budget does. Either

- ``script``: the user's later messages, in order, each optionally revealing functions from
  that turn on (``reveal``: BFCL's missed functions, which ``hidden`` keeps from the agent until
  then); the scripted user ends the conversation (``done``) after its last message is answered;
- or ``persona``: who the user is (``scenario``), what they know (``known``: facts by name),
  what they do not know (``unknown``), how to behave (``instructions``) and which proposed
  actions they agree to (``accept``) or refuse (``refuse``), and, when the world gives the user
  tools of its own (dual control), the calls of them it makes when the agent asks (``act``),
  played by a user model (any alias, or the offline ``persona-user``).

Gold actions of a conversation are the reference steps, each with the ``turn`` it belongs to
(0: before the first reply); ``reference.replies`` are the reference's replies at the end of
each turn but the last (``reference.answer``). Pure pydantic; imports the worlds' task models
(action patterns) only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from mock_tools.worlds.task import ActionPattern, StateAssertion

__all__ = ["Persona", "ScriptTurn", "TaskUser"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class ScriptTurn(_Strict):
    """One scripted message of the user, sent after the agent's reply to the turn before."""

    say: str = Field(min_length=1, description="What the user says.")
    reveal: list[str] = Field(
        default_factory=list,
        description="Functions (by the names the agent is offered) offered from this turn on.",
    )
    expect: list[StateAssertion] = Field(
        default_factory=list,
        description="Per-turn checks: claims about the world's state when the agent replies "
        "to this turn (before the next message).",
    )


class Persona(_Strict):
    scenario: str = Field(min_length=1, description="Who the user is and what they want.")
    known: dict[str, str] = Field(
        default_factory=dict, description="Facts the user knows, by name (order_id: O-1002)."
    )
    unknown: list[str] = Field(
        default_factory=list, description="Things the user does not know (and must not invent)."
    )
    instructions: str = Field(min_length=1, description="How the user behaves.")
    accept: list[ActionPattern] = Field(
        default_factory=list, description="Proposed actions the user agrees to."
    )
    refuse: list[ActionPattern] = Field(
        default_factory=list, description="Proposed actions the user refuses."
    )
    act: list[ActionPattern] = Field(
        default_factory=list,
        description="Dual control: calls of the user's own tools (its ``args`` in full) the "
        "user makes when the agent asks for them (what the offline player does; a user "
        "model reads the instructions).",
    )


class TaskUser(_Strict):
    script: list[ScriptTurn] | None = None
    persona: Persona | None = None
    hidden: list[str] = Field(
        default_factory=list,
        description="Functions not offered to the agent until a scripted turn reveals them.",
    )
    max_turns: int | None = Field(
        default=None, ge=0, description="How often the user may answer (default: the budget's)."
    )
    communicate: list[str] = Field(
        default_factory=list,
        description="Facts the agent must tell the user (each must appear in one of its "
        "replies; case and whitespace aside).",
    )

    @model_validator(mode="after")
    def _one_kind(self) -> TaskUser:
        if (self.script is None) == (self.persona is None):
            raise ValueError("a task's user is a script or a persona (exactly one)")
        if self.persona is None and any(
            name not in {r for t in self.script or [] for r in t.reveal} for name in self.hidden
        ):
            missing = [
                n for n in self.hidden if n not in {r for t in self.script or [] for r in t.reveal}
            ]
            raise ValueError(f"hidden functions no scripted turn reveals: {', '.join(missing)}")
        return self

    def describe(self) -> dict[str, Any]:
        return {"kind": "script" if self.script is not None else "persona"}
