"""The tool environment protocol: the functions offered, and a way to call them.

Imports nothing from the project.
"""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, Field

FINISH = "Finish"
GIVE_ANSWER = "give_answer"
GIVE_UP = "give_up_and_restart"

FINISH_FUNCTION: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": FINISH,
        "description": (
            "If you believe that you have obtained a result that can answer the task, call this "
            "function to provide the final answer. Alternatively, if you recognize that you are "
            "unable to proceed with the task in the current state, call this function to restart. "
            "Remember: you must ALWAYS call this function at the end of your attempt, and the "
            "only part that will be shown to the user is the final answer."
        ),
        "parameters": {
            "type": "object",
            "properties": {
                "return_type": {"type": "string", "enum": [GIVE_ANSWER, GIVE_UP]},
                "final_answer": {
                    "type": "string",
                    "description": (
                        "The final answer you want to give the user. You should have this "
                        "field if return_type=='give_answer'"
                    ),
                },
            },
            "required": ["return_type"],
        },
    },
}
"""ToolBench's ``Finish`` function, offered by every agent next to the env's functions."""


class Observation(BaseModel):
    """What a tool call returned, as the agent sees it, plus how it was produced."""

    ok: bool
    content: str = Field(description="The text shown to the model (JSON: {error, response}).")
    status: int | None = Field(default=None, description="HTTP status, when there is one.")
    provenance: str = Field(
        default="hit",
        description="hit | miss | nearest | simulated | upstream | invalid | fault:<kind> | ...",
    )
    error: str = ""
    origin: dict[str, Any] | None = Field(
        default=None,
        description="Where an answer made at run time came from (source, simulator model, time).",
    )
    infra: bool = Field(
        default=False,
        description="An infrastructure failure (tool server, simulator or upstream down): "
        "the episode stops as an infrastructure error, never the agent's.",
    )
    truncated: bool = Field(default=False, description="Content was cut to the configured size.")
    original_length: int | None = None
    latency_ms: float = 0.0


@runtime_checkable
class ToolEnv(Protocol):
    """The agent's side of the tools. ``functions`` excludes ``Finish``; agents add it."""

    @property
    def functions(self) -> list[dict[str, Any]]: ...

    async def call(self, name: str, args: dict[str, Any]) -> Observation: ...
