"""Episode budgets. Every limit is optional; exhaustion ends an episode, never raises.

Imports nothing from the project.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

DEFAULT_MAX_MODEL_CALLS = 200
"""ToolBench's limit on model calls per query."""


class Budget(BaseModel):
    """The limits of one episode (None: no limit)."""

    max_model_calls: int | None = Field(
        default=DEFAULT_MAX_MODEL_CALLS, ge=1, description="Model calls (ToolBench's limit)."
    )
    max_tool_calls: int | None = Field(default=None, ge=0, description="Tool calls.")
    max_tokens: int | None = Field(default=None, ge=1, description="Prompt + completion tokens.")
    max_seconds: float | None = Field(default=None, gt=0, description="Wall-clock seconds.")
    max_cost: float | None = Field(
        default=None,
        gt=0,
        description="Model cost in USD, checked before each model call (the call that reaches "
        "it is the last).",
    )
    max_depth: int | None = Field(
        default=None,
        ge=1,
        description="Steps (turns) on one path: DFSDT backtracks there, ReAct stops "
        "(see docs/agents.md for the mapping to ToolBench's node depth).",
    )
    max_user_turns: int | None = Field(
        default=None,
        ge=0,
        description="In a conversation: how often the user may answer (default 10); the "
        "agent's reply after the last ends the episode as budget_exhausted.",
    )
    max_turn_model_calls: int | None = Field(
        default=None,
        ge=1,
        description="In a conversation: model calls between two answers of the user.",
    )
