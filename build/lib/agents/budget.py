"""Episode budgets. Every limit is optional; exhaustion ends an episode, never raises.

Imports nothing from the project.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

DEFAULT_MAX_MODEL_CALLS = 200
"""ToolBench's limit on model calls per query."""


class Budget(BaseModel):
    max_model_calls: int | None = Field(default=DEFAULT_MAX_MODEL_CALLS, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1, description="Prompt + completion tokens.")
    max_seconds: float | None = Field(default=None, gt=0)
    max_cost: float | None = Field(default=None, gt=0)
    max_depth: int | None = Field(
        default=None,
        ge=1,
        description="Steps (turns) on one path: DFSDT backtracks there, ReAct stops "
        "(see docs/agents.md for the mapping to ToolBench's node depth).",
    )
