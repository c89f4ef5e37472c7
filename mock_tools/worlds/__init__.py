"""Stateful worlds: tools whose answers depend on a state the calls change (docs/worlds.md).

A world is Python code (a ``World`` subclass whose methods marked ``@read`` / ``@write`` are its
tools) over a state of JSON records (``State``: immutable snapshots with a content hash). The
mock tool service answers a world's calls per session (``WorldSessions``), atomically and under
a per-call time limit; tasks say how their state starts and how it is checked (``TaskWorld``).

    from mock_tools.worlds import Context, ToolError, World, read, write
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mock_tools.lazy import lazy_package

if TYPE_CHECKING:
    from mock_tools.worlds.errors import CallTimedOut, ToolError, WorldDefinitionError
    from mock_tools.worlds.limits import DEFAULT_CALL_SECONDS, CallLimitExceeded
    from mock_tools.worlds.loading import load_engine, load_state
    from mock_tools.worlds.paths import StateDiff, check_assertion, diff_states
    from mock_tools.worlds.sessions import UnknownState, WorldSession, WorldSessions
    from mock_tools.worlds.state import Change, State, StateError, Tx
    from mock_tools.worlds.task import ActionPattern, StateAssertion, TaskWorld, WorldChecks
    from mock_tools.worlds.tools import ToolDef, read, write
    from mock_tools.worlds.world import Context, World, WorldAnswer, WorldEngine

__all__ = [
    "DEFAULT_CALL_SECONDS",
    "ActionPattern",
    "CallLimitExceeded",
    "CallTimedOut",
    "Change",
    "Context",
    "State",
    "StateAssertion",
    "StateDiff",
    "StateError",
    "TaskWorld",
    "ToolDef",
    "ToolError",
    "Tx",
    "UnknownState",
    "World",
    "WorldAnswer",
    "WorldChecks",
    "WorldDefinitionError",
    "WorldEngine",
    "WorldSession",
    "WorldSessions",
    "check_assertion",
    "diff_states",
    "load_engine",
    "load_state",
    "read",
    "write",
]

_EXPORTS = {
    "CallTimedOut": "mock_tools.worlds.errors",
    "ToolError": "mock_tools.worlds.errors",
    "WorldDefinitionError": "mock_tools.worlds.errors",
    "DEFAULT_CALL_SECONDS": "mock_tools.worlds.limits",
    "CallLimitExceeded": "mock_tools.worlds.limits",
    "load_engine": "mock_tools.worlds.loading",
    "load_state": "mock_tools.worlds.loading",
    "StateDiff": "mock_tools.worlds.paths",
    "check_assertion": "mock_tools.worlds.paths",
    "diff_states": "mock_tools.worlds.paths",
    "UnknownState": "mock_tools.worlds.sessions",
    "WorldSession": "mock_tools.worlds.sessions",
    "WorldSessions": "mock_tools.worlds.sessions",
    "Change": "mock_tools.worlds.state",
    "State": "mock_tools.worlds.state",
    "StateError": "mock_tools.worlds.state",
    "Tx": "mock_tools.worlds.state",
    "ActionPattern": "mock_tools.worlds.task",
    "StateAssertion": "mock_tools.worlds.task",
    "TaskWorld": "mock_tools.worlds.task",
    "WorldChecks": "mock_tools.worlds.task",
    "ToolDef": "mock_tools.worlds.tools",
    "read": "mock_tools.worlds.tools",
    "write": "mock_tools.worlds.tools",
    "Context": "mock_tools.worlds.world",
    "World": "mock_tools.worlds.world",
    "WorldAnswer": "mock_tools.worlds.world",
    "WorldEngine": "mock_tools.worlds.world",
}

lazy_package(__name__, _EXPORTS)
