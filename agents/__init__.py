"""agents: tool-using agent loops as a standalone library (knows nothing of servers or runs).

A ``Model`` (``agents.model``) answers with turns; a ``ToolEnv`` (``agents.toolenv``) runs calls;
a strategy (``react``, ``dfsdt``, ``react@N``, or one registered with ``register_strategy``)
drives the one against the other under a ``Budget`` and returns a ``Trajectory``. Nothing here
imports ``sandbox`` or ``mock_tools``. Names below are loaded on first use, so importing one
module of the package does not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from agents.agent import Agent, BaseAgent, EpisodeMeta
    from agents.budget import Budget
    from agents.dfsdt import DFSDTAgent
    from agents.model import Model, ToolCall, Turn, Usage
    from agents.options import AgentOptions
    from agents.react import ReActAgent
    from agents.react_at_n import ReActAtN
    from agents.strategies import STRATEGIES, build_agent, register_strategy, resolve_strategy
    from agents.toolenv import Observation, ToolEnv
    from agents.trajectory import Status, Trajectory

_EXPORTS: dict[str, str] = {
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

__all__ = [
    "Agent",
    "AgentOptions",
    "BaseAgent",
    "Budget",
    "DFSDTAgent",
    "EpisodeMeta",
    "Model",
    "Observation",
    "ReActAgent",
    "ReActAtN",
    "STRATEGIES",
    "Status",
    "ToolCall",
    "ToolEnv",
    "Trajectory",
    "Turn",
    "Usage",
    "build_agent",
    "register_strategy",
    "resolve_strategy",
]

lazy_package(__name__, _EXPORTS)
