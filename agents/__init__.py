"""agents: tool-using agent loops as a standalone library (knows nothing of servers or runs).

A ``Model`` (``agents.model``) answers with turns; a ``ToolEnv`` (``agents.toolenv``) runs calls;
a strategy (``react``, ``dfsdt``, ``react@N``, or one registered with ``register_strategy``)
drives the one against the other under a ``Budget`` and returns a ``Trajectory``. Nothing here
imports ``sandbox`` or ``mock_tools``. Names below are loaded on first use, so importing one
module of the package does not load the others.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "Agent": "agents.agent",
    "AgentOptions": "agents.options",
    "BaseAgent": "agents.agent",
    "Budget": "agents.budget",
    "DFSDTAgent": "agents.dfsdt",
    "EpisodeMeta": "agents.agent",
    "Model": "agents.model",
    "Observation": "agents.toolenv",
    "ReActAgent": "agents.react",
    "ReActAtN": "agents.react_at_n",
    "STRATEGIES": "agents.strategies",
    "Status": "agents.trajectory",
    "ToolCall": "agents.model",
    "ToolEnv": "agents.toolenv",
    "Trajectory": "agents.trajectory",
    "Turn": "agents.model",
    "Usage": "agents.model",
    "build_agent": "agents.strategies",
    "register_strategy": "agents.strategies",
    "resolve_strategy": "agents.strategies",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'agents' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
