"""The runs under a folder, as the viewer's index and the leaderboard list them.

A run is a folder holding ``manifest.json``, found under the root down to ``MAX_DEPTH`` levels
(a comparison keeps one run per strategy in ``runs/compare-<id>/<agent>/``). Its **key**, used in
URLs, is its path relative to the root with ``/`` separators; a key is only ever looked up among
the runs found, never joined to a path, so no request can name a folder outside the root.

Listing reads ``manifest.json`` and ``scores.json`` (regular files inside the run's folder only,
through ``sandbox.view.run_files``: a FIFO would hold the viewer's lock for ever) and nothing else
(a run still going also has its finished lines counted). Of ``scores.json`` it validates the
summary only (``ScoresHead``: the fields of ``RunScores`` the index shows, the pass rate shown
through ``sandbox.eval.headline`` as every command shows it), not the label of every episode;
the whole ``RunScores`` is read when a page asks for it (``RunRecord.scores``). Each run's
reading is cached against the two files' size and modification time (and the trajectories
file's, for the count of a run still going), so a page that polls re-reads only what changed.
May import ``sandbox.store``, ``sandbox.eval`` and the libraries.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from sandbox.errors import RunError
from sandbox.eval.evaluate import RunScores
from sandbox.eval.headline import Headline, headline
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.stats import Interval
from sandbox.store import MANIFEST, SCORES, EpisodeKey, Manifest, RunStore
from sandbox.store.config import RECORDED
from sandbox.store.error_text import first_error
from sandbox.store.trajectory_file import (
    COMPRESSED,
    PLAIN,
    blocks,
    is_compressed,
    open_run_file,
    trajectories_file,
)
from sandbox.view.run_files import NOT_INSIDE, read_run_file, stray_file

__all__ = ["MAX_DEPTH", "Catalog", "RunEntry", "RunRecord", "agent_label", "read_record"]

MAX_DEPTH = 3
"""Folder levels below the root searched for runs (``compare-<id>/<agent>`` is two)."""

ScoresHead: Any = create_model(  # type: ignore[call-overload]
    "ScoresHead",
    __config__=ConfigDict(extra="ignore"),
    **{f: (RunScores.model_fields[f].annotation, ...) for f in ("episodes", "pass_rate", "usage")},
    **{f: (RunScores.model_fields[f].annotation, None) for f in ("judge",)},
    protocol=(str, "default"),
)
"""The part of ``RunScores`` the index shows, typed as ``RunScores`` types it."""


class RunEntry(BaseModel):
    """One line of the index: what a run is and how it went, from its manifest and scores."""

    key: str = Field(description="Path relative to the viewer's root; the run's id in URLs.")
    run_id: str
    suite: str = ""
    suite_fingerprint: str = ""
    agent: str = Field(
        default="", description="Strategy and the options given, e.g. dfsdt(width=3)."
    )
    model: str = ""
    started_at: datetime | None = None
    ended_at: datetime | None = None
    status: str = Field(description="running | completed | failed | interrupted | unreadable.")
    episodes: int = Field(default=0, description="Episodes the run selected (tasks x trials).")
    finished: int | None = Field(
        default=None, description="Episodes with a trajectory (None when not counted)."
    )
    scored: bool = Field(default=False, description="scores.json is there and readable.")
    protocol: str | None = Field(default=None, description="The evaluation protocol scored.")
    judge: str | None = Field(default=None, description="The judge of the labels, if any.")
    pass_rate: Interval | None = Field(
        default=None, description="scores.json's pass rate as stored (n 0: see headline)."
    )
    headline: Headline | None = Field(
        default=None, description="The pass rate as every output shows it (n/a over nothing)."
    )
    cost: float | None = None
    tokens: int | None = None
    model_calls: int | None = None
    tool_calls: int | None = None
    replay_of: str | None = Field(default=None, description="The run a replay re-executed.")
    error: str | None = Field(default=None, description="Why the run could not be read in full.")


@dataclass(frozen=True)
class RunRecord:
    """A run as read: its folder, its manifest, and its index entry."""

    path: Path
    entry: RunEntry
    manifest: Manifest | None

    @cached_property
    def scores(self) -> RunScores | None:
        """The whole ``scores.json`` (None when the run is not scored), read at first use."""
        if not self.entry.scored:
            return None
        try:
            data = read_run_file(self.path, SCORES)
            return None if data is None else RunScores.model_validate_json(data)
        except (OSError, ValidationError, ValueError):  # a FIFO, a device: refused unread
            return None

    @cached_property
    def labels(self) -> dict[EpisodeKey, EpisodeLabel]:
        """The labels of ``scores.json`` by episode (empty when the run is not scored)."""
        scores = self.scores
        return {(lb.task_id, lb.trial): lb for lb in scores.labels} if scores else {}

    def store(self) -> RunStore:
        if self.manifest is None:
            raise RunError(f"run {self.entry.key}: {self.entry.error}")
        return RunStore(self.path, self.manifest)


def agent_label(manifest: Manifest) -> str:
    """The strategy as a table shows it: its name and the options the run set explicitly."""
    name = str(manifest.agent.get("name") or manifest.config.agent.name)
    options = manifest.config.agent.options
    if not options:
        return name
    return f"{name}(" + ", ".join(f"{k}={v}" for k, v in sorted(options.items())) + ")"


def _stamp(path: Path) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _count_lines(path: Path) -> int:
    """Finished lines of a trajectories file (a torn last line or frame does not count)."""
    try:
        if is_compressed(path):
            return sum(block.data.count(b"\n") for block in blocks(path))
        with open_run_file(path) as fh:
            return sum(block.count(b"\n") for block in iter(lambda: fh.read(1 << 20), b""))
    except (OSError, RunError):
        return 0


def _replay_of(manifest: Manifest) -> str | None:
    if manifest.model.get("kind") != "replay":
        return None
    run = (manifest.model.get("params") or {}).get("run")
    return str(run) if run else None


def read_record(path: Path, key: str) -> RunRecord:
    """Read one run folder; problems become the entry's ``error``, never an exception. A run
    whose manifest or trajectories file is not a regular file inside its folder
    (``sandbox.view.run_files``) is unreadable; such a ``scores.json`` is left unread."""
    try:
        data = read_run_file(path, MANIFEST)
        stray = [n for n in (MANIFEST, PLAIN, COMPRESSED) if stray_file(path, n)]
        if stray or data is None:
            raise OSError(f"{(stray or [MANIFEST])[0]} {NOT_INSIDE}")
        manifest = Manifest.model_validate_json(data, context=RECORDED)
    except (OSError, ValidationError, ValueError) as e:
        entry = RunEntry(key=key, run_id=path.name, status="unreadable", error=_short(e))
        return RunRecord(path, entry, None)
    scores: Any = None
    error = None
    if os.path.lexists(path / SCORES):
        try:
            data = read_run_file(path, SCORES)
            if data is None:
                raise OSError(f"{SCORES} {NOT_INSIDE}")
            scores = ScoresHead.model_validate_json(data)
        except (OSError, ValidationError, ValueError) as e:
            error = f"scores.json unreadable: {_short(e)}"
    entry = RunEntry(
        key=key,
        run_id=manifest.run_id,
        suite=manifest.suite.name,
        suite_fingerprint=manifest.suite.fingerprint,
        agent=agent_label(manifest),
        model=str(manifest.model.get("name") or manifest.config.model.name),
        started_at=manifest.started_at,
        ended_at=manifest.ended_at,
        status=manifest.status,
        episodes=len(manifest.episodes),
        replay_of=_replay_of(manifest),
        error=error or manifest.error,
    )
    if scores is not None and manifest.status != "running":
        u = scores.usage
        entry.scored = True
        entry.protocol = scores.protocol
        entry.judge = scores.judge.model if scores.judge is not None else None
        entry.pass_rate = scores.pass_rate.pass_rate
        entry.headline = headline(scores.pass_rate)
        entry.finished = scores.pass_rate.n - scores.pass_rate.missing
        entry.episodes = entry.episodes or scores.episodes
        entry.cost, entry.tokens = u.cost, u.tokens
        entry.model_calls, entry.tool_calls = u.model_calls, u.tool_calls
    else:
        try:
            entry.finished = _count_lines(trajectories_file(path))
        except RunError as e:  # both trajectories files: which one is the run's?
            entry.error = str(e)
    return RunRecord(path, entry, manifest)


def _short(error: Exception) -> str:
    if isinstance(error, ValidationError):
        return first_error(error)
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return str(error).splitlines()[0][:200]


class Catalog:
    """The runs under ``root``; ``runs()`` rescans the folders, reading only what changed."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self._cache: dict[str, tuple[Any, RunRecord]] = {}
        self._paths: dict[str, Path] = {}

    def _scan(self) -> dict[str, Path]:
        found: dict[str, Path] = {}

        def walk(folder: Path, depth: int) -> None:
            if (folder / MANIFEST).is_file():
                key = folder.relative_to(self.root).as_posix()
                found[key if key != "." else folder.name] = folder
                return
            if depth >= MAX_DEPTH:
                return
            try:
                children = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                return
            for child in children:
                if child.name.startswith(".") or not child.is_dir(follow_symlinks=False):
                    continue
                walk(Path(child.path), depth + 1)

        if self.root.is_dir():
            walk(self.root, 0)
        self._paths = found
        return found

    def record(self, key: str, *, rescan: bool = True) -> RunRecord | None:
        """The run with this key (None when there is none); re-read if its files changed."""
        path = self._paths.get(key)
        if path is None and rescan:
            path = self._scan().get(key)
        if path is None:
            return None
        both = (path / PLAIN, path / COMPRESSED)  # stamped apart: a folder may hold both
        stamp = (_stamp(path / MANIFEST), _stamp(path / SCORES), *map(_stamp, both))
        if stamp[0] is None:
            return None
        cached = self._cache.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        record = read_record(path, key)
        self._cache[key] = (stamp, record)
        return record

    def records(self) -> list[RunRecord]:
        """Every run under the root, newest first."""
        keys = self._scan()
        out = [r for k in keys if (r := self.record(k, rescan=False)) is not None]
        for gone in set(self._cache) - set(keys):
            del self._cache[gone]
        return sorted(out, key=_newest_first)

    def runs(self) -> list[RunEntry]:
        return [r.entry for r in self.records()]


def _newest_first(record: RunRecord) -> tuple[float, str]:
    started = record.entry.started_at
    return (-(started.timestamp() if started else 0.0), record.entry.key)
