"""Strategy options: ``AgentOptions`` holds what every strategy takes; each strategy subclasses it.

A strategy declares its options once, as a pydantic model (``DFSDTOptions`` adds the width and
how far a depth cut and a give-up climb; ``ReActAtNOptions`` adds N). The harness validates a
run's ``agent_options`` with that class, maps command-line flags onto its fields by name, and
records the validated values in every trajectory (``Trajectory.agent.params``).

Budgets (model and tool calls, tokens, seconds, cost, depth) are not options: they are the run's,
and every strategy honours every one of them through the shared step (``agents.step``). May
import nothing from the rest of ``agents``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "DEFAULT_MAX_OBSERVATION_CHARS",
    "AgentOptions",
    "DepthUnit",
    "ModelErrorPolicy",
]

DEFAULT_MAX_OBSERVATION_CHARS = 2048
"""Observations longer than this are cut before the model sees them (the cut is recorded)."""

DepthUnit = Literal["turns", "toolbench_nodes"]
"""How the depth budget counts a path: assistant turns, or ToolBench's tree nodes, where a turn
adds one node for its text (Thought) and two per call (Action, Action Input)."""

ModelErrorPolicy = Literal["stop", "prune"]
"""What a model-call failure does to a search: end the episode, or prune that branch only."""


class AgentOptions(BaseModel):
    """The options every strategy takes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_prompt: str | None = Field(
        default=None, description="System prompt sent instead of the default one."
    )
    max_observation_chars: int | None = Field(
        default=DEFAULT_MAX_OBSERVATION_CHARS,
        ge=1,
        description="Observations longer than this are cut (and '...' appended) before the "
        "model sees them.",
    )
    depth_unit: DepthUnit = Field(
        default="turns",
        description="How the depth budget counts a path: turns, or ToolBench's tree nodes.",
    )
