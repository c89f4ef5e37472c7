"""Replaying runs offline (``replay_run``: agent- and call-level) and forking them (``fork_run``).

Above ``run``, ``store``, ``tool_envs`` and ``interop``; below ``commands``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.replay.fork import fork_run
    from sandbox.replay.replay import (
        EpisodeVerdict,
        ReplayReport,
        StepDiff,
        compare_trajectories,
        replay_calls,
        replay_run,
        replay_run_async,
    )

_EXPORTS: dict[str, str] = {
    "EpisodeVerdict": "sandbox.replay.replay",
    "ReplayReport": "sandbox.replay.replay",
    "StepDiff": "sandbox.replay.replay",
    "compare_trajectories": "sandbox.replay.replay",
    "fork_run": "sandbox.replay.fork",
    "replay_calls": "sandbox.replay.replay",
    "replay_run": "sandbox.replay.replay",
    "replay_run_async": "sandbox.replay.replay",
}

__all__ = [
    "EpisodeVerdict",
    "ReplayReport",
    "StepDiff",
    "compare_trajectories",
    "fork_run",
    "replay_calls",
    "replay_run",
    "replay_run_async",
]

lazy_package(__name__, _EXPORTS)
