"""A run's preset applied to its model: ToolBench's request parameters and message shape.

``with_preset(spec, name)`` gives the spec a run uses: for a kind that sends requests to an
endpoint (``ModelKind.remote``), the preset's request parameters where the spec's own ``params``
set none (a value given explicitly wins), and its message shape when the spec uses native tool
calls (``tool_calls: toolbench``). The spec is what trajectories and the manifest record of the
model, so they say what was sent. May import ``agents`` and ``sandbox.models.provider`` only.
"""

from __future__ import annotations

from agents.presets import PRESETS, preset_values
from sandbox.models.provider import ModelSpec

__all__ = ["with_preset"]


def with_preset(spec: ModelSpec, preset: str | None) -> ModelSpec:
    """``spec`` with the preset's request parameters and message shape (see the module)."""
    if preset is None or not spec.remote:
        return spec
    params = {**preset_values(preset, "request"), **spec.params}
    tool_calls = spec.tool_calls
    if tool_calls == "native" and PRESETS.get(preset).message_shape == "toolbench":
        tool_calls = "toolbench"
    if params == spec.params and tool_calls == spec.tool_calls:
        return spec
    return spec.model_copy(update={"params": params, "tool_calls": tool_calls})
