"""The run record: its config, its manifest and its folder (``runs/<id>/``).

Everything that reads or writes a run folder goes through here: the runner appends episodes,
replay, fork, evaluation and the importers read them. Below ``run``, ``models``, ``eval`` and
``interop``; imports ``agents`` and ``mock_tools`` only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
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

_EXPORTS: dict[str, str] = {
    "EpisodeDigest": "sandbox.store.episode_index",
    "EpisodeIndex": "sandbox.store.episode_index",
    "EpisodeKey": "sandbox.store.manifest",
    "MANIFEST": "sandbox.store.run_store",
    "Manifest": "sandbox.store.manifest",
    "RunConfig": "sandbox.store.config",
    "RunStatus": "sandbox.store.manifest",
    "RunStore": "sandbox.store.run_store",
    "SCORES": "sandbox.store.run_store",
    "SuiteInfo": "sandbox.store.manifest",
    "TRAJECTORIES": "sandbox.store.run_store",
    "make_run_id": "sandbox.store.manifest",
    "needs_rerun": "sandbox.store.run_store",
    "read_trajectories": "sandbox.store.run_store",
    "select_tasks": "sandbox.store.selection",
}

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

lazy_package(__name__, _EXPORTS)
