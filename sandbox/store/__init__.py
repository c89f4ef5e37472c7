"""The run record: its config, its manifest and its folder (``runs/<id>/``).

Everything that reads or writes a run folder goes through here: the runner appends episodes,
replay, fork, evaluation and the importers read them. Below ``run``, ``models``, ``eval`` and
``interop``; imports ``agents`` and ``mock_tools`` only.
"""

from sandbox.store.config import RunConfig
from sandbox.store.episode_index import EpisodeDigest, EpisodeIndex
from sandbox.store.manifest import EpisodeKey, Manifest, RunStatus, SuiteInfo, make_run_id
from sandbox.store.run_store import (
    MANIFEST,
    SCORES,
    TRAJECTORIES,
    RunStore,
    needs_rerun,
    read_trajectories,
)
from sandbox.store.selection import select_tasks

__all__ = [
    "MANIFEST",
    "SCORES",
    "TRAJECTORIES",
    "EpisodeDigest",
    "EpisodeIndex",
    "EpisodeKey",
    "Manifest",
    "RunConfig",
    "RunStatus",
    "RunStore",
    "SuiteInfo",
    "make_run_id",
    "needs_rerun",
    "read_trajectories",
    "select_tasks",
]
