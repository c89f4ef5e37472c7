"""``EpisodeIndex``: where each episode of a run sits in its trajectories file, and its digest.

Readers that show a run (the viewer, the final answers of ``report.md``) need a line per episode
(status, steps, usage, answer) and, for one episode, its whole trajectory; neither needs every
trajectory validated. The index finds each line's episode from its first bytes and keeps the
line's byte offset: one episode is read back by seeking there, without parsing the others. In a
compressed file (``trajectories.jsonl.zst``) a line's place is its frame's offset and size and
where the line sits in the frame: one episode is read back by decompressing its frame alone.
Digests (``EpisodeDigest``) are made on demand, each line parsed once with ``json``.

The file is append-only while a run is going: ``refresh`` parses only the bytes added since the
last call (a torn last line waits for its newline). A file that shrank or was replaced (a resume
compacts it) is indexed again from the start. As in ``read_trajectories``, the latest line of an
episode wins. May import ``sandbox.store`` modules, ``sandbox.errors`` and ``agents`` only.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from agents.trajectory import EpisodeUsage, Trajectory
from sandbox.errors import RunError
from sandbox.store.manifest import EpisodeKey
from sandbox.store.run_store import parse_trajectory_line
from sandbox.store.trajectory_file import (
    blocks,
    is_compressed,
    line_key,
    open_run_file,
    read_block,
    trajectories_file,
)

__all__ = ["EpisodeDigest", "EpisodeIndex"]

_USAGE_FIELDS = tuple(EpisodeUsage.model_fields)


@dataclass(frozen=True)
class EpisodeDigest:
    """One episode as a table row shows it, and where its line is."""

    scenario_id: str
    trial: int
    status: str
    end_reason: str
    final_answer: str | None
    steps: int
    usage: EpisodeUsage
    infra_error: bool
    offset: int
    """Where the line is: its byte offset in a plain file, its frame's in a compressed one."""
    length: int
    line: int = 0
    """The line of ``trajectories.jsonl`` it was read from (1 is the first)."""

    @property
    def key(self) -> EpisodeKey:
        return (self.scenario_id, self.trial)


def _digest(data: dict[str, Any], where: tuple[int, int, int]) -> EpisodeDigest:
    offset, length, line = where
    usage = data.get("usage") or {}
    errors = data.get("errors") or []
    status = str(data.get("status") or "")
    return EpisodeDigest(
        scenario_id=str(data["scenario_id"]),
        trial=int(data.get("trial") or 0),
        status=status,
        end_reason=str(data.get("end_reason") or ""),
        final_answer=data.get("final_answer"),
        steps=len(data.get("nodes") or []),
        usage=EpisodeUsage(**{k: usage[k] for k in _USAGE_FIELDS if k in usage}),
        infra_error=status == "error"
        and any(isinstance(e, dict) and e.get("kind") == "infra" for e in errors),
        offset=offset,
        length=length,
        line=line,
    )


@dataclass(frozen=True)
class _Place:
    """Where a line is: ``size`` bytes at ``offset`` hold it (a plain file: the line itself;
    a compressed one: its frame), and the line is ``length`` bytes from ``start`` of them."""

    offset: int
    size: int
    start: int
    length: int
    line: int
    """Its line number (1 is the first)."""


@dataclass
class EpisodeIndex:
    """The episodes of one run folder (or one ``.jsonl`` file), kept up to date by ``refresh``."""

    path: Path
    _where: dict[EpisodeKey, _Place] = field(default_factory=dict)
    _digests: dict[EpisodeKey, EpisodeDigest] = field(default_factory=dict)
    _file_id: tuple[int, int] | None = None
    _done: int = 0
    _lines: int = 0
    _folder: Path | None = None
    _block: tuple[int, bytes] | None = None
    """The frame read last (its offset and lines): the next line asked for is often in it."""

    @classmethod
    def of(cls, run: str | Path) -> EpisodeIndex:
        path = Path(run)
        index = cls(trajectories_file(path), _folder=path) if path.is_dir() else cls(path)
        index.refresh()
        return index

    def refresh(self) -> EpisodeIndex:
        """Take in the lines appended since the last refresh (all of them after a rewrite)."""
        if self._folder is not None and not self.path.exists():  # a run not started yet
            self.path = trajectories_file(self._folder)
        self._block = None
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._restart(None)
            return self
        if not stat.S_ISREG(st.st_mode):  # a FIFO would block the reader, a device never end
            raise RunError(f"{self.path}: not a regular file")
        file_id = (st.st_dev, st.st_ino)
        if file_id != self._file_id or st.st_size < self._done:
            self._restart(file_id)
        if st.st_size == self._done:
            return self
        compressed = is_compressed(self.path)
        for block in blocks(self.path, self._done):  # a torn tail waits for its end
            data, start = block.data, 0
            while start < len(data):
                stop = data.index(b"\n", start)
                self._lines += 1
                if data[start:stop].strip():
                    if compressed:
                        place = _Place(block.offset, block.size, start, stop - start, self._lines)
                    else:
                        place = _Place(
                            block.offset + start, stop - start, 0, stop - start, self._lines
                        )
                    self._locate(data[start:stop], place)
                start = stop + 1
            self._done = block.end
        return self

    def _restart(self, file_id: tuple[int, int] | None) -> None:
        self._where, self._digests, self._file_id, self._done, self._lines = {}, {}, file_id, 0, 0
        self._block = None

    def _locate(self, line: bytes, place: _Place) -> None:
        try:
            key = line_key(line)
        except (ValueError, KeyError, TypeError) as e:
            raise RunError(f"{self.path}:{place.line}: not a trajectory line ({e})") from e
        self._where.pop(key, None)  # the latest line of an episode wins, in its place
        self._where[key] = place
        self._digests.pop(key, None)

    def _line(self, fh: BinaryIO, key: EpisodeKey) -> bytes:
        place = self._where[key]
        if not is_compressed(self.path):
            fh.seek(place.offset)
            return fh.read(place.length)
        if self._block is None or self._block[0] != place.offset:
            self._block = (place.offset, read_block(fh, True, place.offset, place.size))
        return self._block[1][place.start : place.start + place.length]

    def _digest_of(self, fh: BinaryIO, key: EpisodeKey) -> EpisodeDigest:
        place = self._where[key]
        try:
            data = json.loads(self._line(fh, key))
            return _digest(data, (place.offset, place.length, place.line))
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            raise RunError(f"{self.path}:{place.line}: not a trajectory line ({e})") from e

    @property
    def keys(self) -> list[EpisodeKey]:
        """Every episode, in file order of its latest line."""
        return list(self._where)

    @property
    def digests(self) -> list[EpisodeDigest]:
        """Every episode's digest, in file order of its latest line (each line parsed once)."""
        missing = [k for k in self._where if k not in self._digests]
        if missing:
            with open_run_file(self.path) as fh:
                for key in missing:
                    self._digests[key] = self._digest_of(fh, key)
        return [self._digests[k] for k in self._where]

    def get(self, key: EpisodeKey) -> EpisodeDigest | None:
        """One episode's digest (its line is parsed now if it was not yet)."""
        if key not in self._where:
            return None
        if key not in self._digests:
            with open_run_file(self.path) as fh:
                self._digests[key] = self._digest_of(fh, key)
        return self._digests[key]

    def __contains__(self, key: object) -> bool:
        return key in self._where

    def __len__(self) -> int:
        return len(self._where)

    def trajectory(self, key: EpisodeKey) -> Trajectory | None:
        """The full trajectory of one episode, read from its line alone (None if absent)."""
        if key not in self._where:
            return None
        with open_run_file(self.path) as fh:
            line = self._line(fh, key)
        return parse_trajectory_line(line, f"{self.path}:{self._where[key].line}")
