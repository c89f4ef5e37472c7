"""Replaying runs offline (``replay_run``: agent- and call-level) and forking them (``fork_run``).

Above ``run``, ``store``, ``tool_envs`` and ``interop``; below ``commands``.
"""

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
