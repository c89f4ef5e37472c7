"""Tool environments: the agents' ``ToolEnv`` over a mock tool server, whatever the transport.

``open_tool_envs(config, suite)`` is the one way a run, a replay, a fork or a probe gets its
tools. Below ``run``, ``replay`` and ``eval``; imports ``sandbox.store``, ``agents`` and
``mock_tools`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.tool_envs.factory import (
        TOOL_TRANSPORTS,
        EpisodeToolEnv,
        HttpToolEnvs,
        ToolEnvs,
        ToolTransport,
        open_tool_envs,
        register_tool_transport,
    )
    from sandbox.tool_envs.http import HttpToolEnv, observation_text, tool_functions

_EXPORTS: dict[str, str] = {
    "EpisodeToolEnv": "sandbox.tool_envs.factory",
    "HttpToolEnv": "sandbox.tool_envs.http",
    "HttpToolEnvs": "sandbox.tool_envs.factory",
    "TOOL_TRANSPORTS": "sandbox.tool_envs.factory",
    "ToolEnvs": "sandbox.tool_envs.factory",
    "ToolTransport": "sandbox.tool_envs.factory",
    "observation_text": "sandbox.tool_envs.http",
    "open_tool_envs": "sandbox.tool_envs.factory",
    "register_tool_transport": "sandbox.tool_envs.factory",
    "tool_functions": "sandbox.tool_envs.http",
}

__all__ = [
    "TOOL_TRANSPORTS",
    "EpisodeToolEnv",
    "HttpToolEnv",
    "HttpToolEnvs",
    "ToolEnvs",
    "ToolTransport",
    "observation_text",
    "open_tool_envs",
    "register_tool_transport",
    "tool_functions",
]

lazy_package(__name__, _EXPORTS)
