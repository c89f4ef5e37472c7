"""agents: tool-using agent loops as a standalone library (knows nothing of servers or runs).

A ``Model`` (``agents.model``) answers with turns; a ``ToolEnv`` (``agents.toolenv``) runs calls;
a strategy (``react``, ``dfsdt``, ``react@N``, or one registered with ``register_strategy``)
drives the one against the other under a ``Budget`` and returns a ``Trajectory``. A strategy of
one's own subclasses a built-in and overrides a hook of its chains (``ChainHooks``), or runs its
own loop of ``run_chain`` / ``Episode.step`` and ends with ``episode_end`` / ``fallback_end``
(``agents.chain``; docs/architecture.md has the recipe). Nothing here imports ``sandbox`` or
``mock_tools``. Names below are loaded on first use, so importing one module of the package does
not load the others.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from agents.agent import Agent, BaseAgent, EpisodeMeta
    from agents.budget import Budget
    from agents.chain import ChainHooks, run_chain
    from agents.dfsdt import DFSDTAgent
    from agents.model import Model, ToolCall, Turn, Usage
    from agents.options import AgentOptions
    from agents.outcome import ChainEnd, episode_end, fallback_end, successful_observations
    from agents.react import ReActAgent
    from agents.react_at_n import ReActAtN
    from agents.step import Episode, EpisodeEnd
    from agents.strategies import STRATEGIES, build_agent, register_strategy, resolve_strategy
    from agents.toolenv import Observation, ToolEnv
    from agents.trajectory import Node, Status, Trajectory

_EXPORTS: dict[str, str] = {
    "Agent": "agents.agent",
    "AgentOptions": "agents.options",
    "BaseAgent": "agents.agent",
    "Budget": "agents.budget",
    "ChainEnd": "agents.outcome",
    "ChainHooks": "agents.chain",
    "DFSDTAgent": "agents.dfsdt",
    "Episode": "agents.step",
    "EpisodeEnd": "agents.step",
    "EpisodeMeta": "agents.agent",
    "Model": "agents.model",
    "Node": "agents.trajectory",
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
    "episode_end": "agents.outcome",
    "fallback_end": "agents.outcome",
    "register_strategy": "agents.strategies",
    "resolve_strategy": "agents.strategies",
    "run_chain": "agents.chain",
    "successful_observations": "agents.outcome",
}

__all__ = [
    "Agent",
    "AgentOptions",
    "BaseAgent",
    "Budget",
    "ChainEnd",
    "ChainHooks",
    "DFSDTAgent",
    "Episode",
    "EpisodeEnd",
    "EpisodeMeta",
    "Model",
    "Node",
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
    "episode_end",
    "fallback_end",
    "register_strategy",
    "resolve_strategy",
    "run_chain",
    "successful_observations",
]

lazy_package(__name__, _EXPORTS)
