"""Tool environments: the agents' ``ToolEnv`` over a mock tool server, whatever the transport.

``open_tool_envs(config, suite)`` is the one way a run, a replay, a fork or a probe gets its
tools. Below ``run``, ``replay`` and ``eval``; imports ``sandbox.store``, ``agents`` and
``mock_tools`` only.
"""

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
