"""The run folder: ``manifest.json``, the trajectories file and ``scores.json`` (``RunStore``).

::

    runs/<run-id>/
        manifest.json       Manifest: config, suite fingerprint, versions, git sha, status, times
        trajectories.jsonl  one Trajectory per finished episode, appended and fsynced in groups
          (or trajectories.jsonl.zst with --compress: the same lines, one zstd frame a group)
        scores.json         written at the end of the run

Crash safety: each group of trajectories (``append_lines``; a run's ``GroupCommit`` writes the
episodes that finished together) is one ``write`` of whole lines (or of one zstd frame of them)
on an ``O_APPEND`` descriptor, followed by ``fsync``, under a lock. A crash can at worst leave a
torn last line or frame; opening the store for appending cuts it. Readers ignore it
(``sandbox.store.trajectory_file``). Resuming compacts the file (atomically) to one line per
episode, dropping infrastructure- and harness-error episodes so they run again.
May import ``sandbox.store`` modules, ``sandbox.errors`` and ``agents`` only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path

from pydantic import ValidationError

from agents.trajectory import Status, Trajectory
from sandbox.errors import RunError
from sandbox.store.config import RECORDED, check_run_id
from sandbox.store.gc_pause import paused_gc
from sandbox.store.lock import RunLock
from sandbox.store.manifest import EpisodeKey, Manifest
from sandbox.store.trajectory_file import (
    COMPRESSED,
    PLAIN,
    FrameWriter,
    is_compressed,
    iter_lines,
    line_key,
    trajectories_file,
    whole_end,
)

__all__ = [
    "COMPRESSED",
    "MANIFEST",
    "SCORES",
    "TRAJECTORIES",
    "RunStore",
    "StoreFull",
    "needs_rerun",
    "iter_latest",
    "iter_trajectories",
    "read_trajectories",
    "run_folder",
]

MANIFEST = "manifest.json"
TRAJECTORIES = PLAIN
SCORES = "scores.json"


class RunStore:
    """One run folder. Use ``create`` for a new run, ``open`` for an existing one."""

    def __init__(self, path: Path, manifest: Manifest) -> None:
        self.path = path
        self.manifest = manifest
        self.run_lock = RunLock(path, manifest.run_id)
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._writer: FrameWriter | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    @classmethod
    def create(cls, out: str | Path, manifest: Manifest) -> RunStore:
        """A new run folder ``out/<run_id>``, locked for this process (``release`` frees it)."""
        path = run_folder(out, manifest.run_id)
        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise RunError(f"cannot create the run folder {path}: {e.strerror}") from e
        store = cls(path, manifest)
        store.run_lock.acquire()
        if (path / MANIFEST).exists():
            store.run_lock.release()
            raise RunError(f"{path} already holds a run; use --resume {path} to continue it")
        store.write_manifest()
        return store

    def lock(self) -> None:
        """Become the run's only writer (``RunError`` naming the process that is)."""
        self.run_lock.acquire()

    def release(self) -> None:
        """Close the trajectories file and give the run's lock up."""
        self.close()
        self.run_lock.release()

    @classmethod
    def open(cls, path: str | Path) -> RunStore:
        path = Path(path)
        file = path / MANIFEST
        if not file.is_file():
            raise RunError(f"{path} is not a run folder (no {MANIFEST})")
        try:
            text = file.read_text(encoding="utf-8")
            manifest = Manifest.model_validate_json(text, context=RECORDED)
        except (OSError, ValidationError, ValueError) as e:
            raise RunError(f"{file}: cannot read the manifest: {e}") from e
        return cls(path, manifest)

    def suite_path(self, path: str | None = None) -> Path:
        """The suite folder of the run (or ``path``, another suite its config names, such as
        ``record_into``): where the manifest says (an absolute path since runs record one), else
        its recorded path relative to the run's folders or the working directory; ``RunError``
        when it is in none of them."""
        here = self.path.resolve()
        bases = [here, *here.parents, Path.cwd()]
        recorded_paths = [path] if path else [self.manifest.suite.path, self.manifest.config.suite]
        tried: list[str] = []
        for recorded in dict.fromkeys(recorded_paths):
            if not recorded:
                continue
            tried.append(recorded)
            candidates = [Path(recorded)] if Path(recorded).is_absolute() else bases
            for base in candidates:
                candidate = base / recorded
                if (candidate / "suite.yaml").is_file() or candidate.is_file():  # a task file
                    return candidate
        raise RunError(
            f"the suite of run {self.manifest.run_id} is not at {' or '.join(tried)}; "
            "run the command from the folder the run was made in, or put the suite back"
        )

    def write_manifest(self) -> None:
        text = self.manifest.model_dump_json(indent=2, by_alias=True) + "\n"
        try:
            _write_atomic(self.path / MANIFEST, text)
        except OSError as e:
            raise RunError(f"cannot write {self.path / MANIFEST}: {e.strerror}") from e

    def complete_if_finished(self) -> bool:
        """Mark a run ``completed`` that stored every episode but was cut off while scoring
        (its process is gone: nobody holds the lock). True when it did."""
        if self.manifest.status != "running" or self.run_lock.owner() is not None:
            return False
        latest = iter_latest(self.trajectories_path)  # one at a time: a run may be large
        done = {(t.scenario_id, t.trial) for t in latest if not needs_rerun(t)}
        if not all(tuple(k) in done for k in self.manifest.episodes):
            return False
        self.manifest.status = "completed"
        self.manifest.ended_at = datetime.now(timezone.utc)
        self.write_manifest()
        return True

    # -- trajectories ----------------------------------------------------------------------------

    @property
    def trajectories_path(self) -> Path:
        """``trajectories.jsonl``, or ``trajectories.jsonl.zst`` for a run made with
        ``--compress`` (whichever exists: a run keeps the format it started with)."""
        return trajectories_file(self.path, self.manifest.config.output.compress)

    def trajectories(self) -> list[Trajectory]:
        """The latest trajectory of each episode, in file order of that latest line."""
        return read_trajectories(self.path)

    def compact(self) -> dict[EpisodeKey, float]:
        """Rewrite the file atomically: one line per finished episode, infra errors dropped.

        Returns the cost (USD) of each finished episode, by key. Run before resuming, so re-runs
        never duplicate. Streams the file twice (which line to keep per episode, then those
        lines), so no trajectory is held beyond the one being read."""
        self.close()
        chosen: dict[EpisodeKey, int] = {}
        costs: dict[EpisodeKey, float] = {}
        for lineno, traj in iter_trajectories(self.trajectories_path):
            if needs_rerun(traj):
                continue
            key = (traj.scenario_id, traj.trial)
            chosen[key] = lineno  # the latest line, in the place of the first (a dict's order)
            costs[key] = traj.usage.cost
        keep = set(chosen.values())
        order = {lineno: i for i, lineno in enumerate(chosen.values())}
        kept = (
            (order[lineno], traj.to_json_line())
            for lineno, traj in iter_trajectories(self.trajectories_path)
            if lineno in keep
        )
        _write_lines_atomic(self.trajectories_path, kept, len(order))
        return costs

    @property
    def _frames(self) -> FrameWriter:
        if self._writer is None or self._writer.compressed != is_compressed(self.trajectories_path):
            self._writer = FrameWriter(is_compressed(self.trajectories_path))
        return self._writer

    def append(self, trajectory: Trajectory) -> None:
        """Append one trajectory as one line, then fsync (``append_lines``)."""
        self.append_lines([trajectory.to_json_line().encode("utf-8")])

    def append_lines(self, lines: list[bytes]) -> None:
        """Append whole trajectory lines with one ``write`` (of one zstd frame of them in a
        compressed file), then one ``fsync``. Safe from several threads (a run appends from its
        group-commit thread: ``GroupCommit``).

        When the write fails (a full disk, a file size limit), the lines are written one by one
        instead, as many as fit; the first that does not is cut, none after it is written, and
        a ``StoreFull`` (a ``RunError``) says how many were stored: the run stops and resumes
        from there."""
        with self._lock:
            try:
                fd = self._open_fd()
            except OSError as e:
                raise RunError(f"cannot write {self.trajectories_path}: {e.strerror}") from e
            try:
                _write_whole(fd, self._frames.encode(lines))
                stored = len(lines)
            except OSError as e:
                error: OSError | None = e
                stored = 0
                if len(lines) > 1:
                    stored, error = _write_each(fd, [self._frames.encode([li]) for li in lines])
            else:
                error = None
            try:
                os.fsync(fd)
            except OSError as e:
                error, stored = error or e, 0
        if error is not None:
            raise StoreFull(
                f"cannot write {self.trajectories_path}: {error.strerror or error}; the "
                "episodes stored so far are kept (--resume continues once there is room)",
                stored=stored,
            )

    def _open_fd(self) -> int:
        if self._fd is None:
            path = self.trajectories_path
            fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                _cut_torn_tail(fd, is_compressed(path))
            except BaseException:
                os.close(fd)
                raise
            self._fd = fd
        return self._fd

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StoreFull(RunError):
    """Trajectory lines that could not be written; ``stored``: how many of them were."""

    def __init__(self, message: str, *, stored: int) -> None:
        super().__init__(message)
        self.stored = stored


def _write_whole(fd: int, data: bytes) -> None:
    """``data`` appended whole, or the file cut back to where it was and ``OSError``."""
    start = os.fstat(fd).st_size
    try:
        written = os.write(fd, data)
        if written != len(data):
            raise OSError(errno.ENOSPC, f"short write ({written}/{len(data)} bytes)")
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def _write_each(fd: int, lines: list[bytes]) -> tuple[int, OSError | None]:
    """As many of ``lines`` as can be appended whole, in order: how many, and the error."""
    for i, line in enumerate(lines):
        try:
            _write_whole(fd, line)
        except OSError as e:
            return i, e
    return len(lines), None


def run_folder(out: str | Path, run_id: str) -> Path:
    """``out/run_id``, checked to be a folder directly inside ``out``."""
    try:
        check_run_id(run_id)
    except ValueError as e:
        raise RunError(str(e)) from e
    base = Path(out).resolve()
    path = (base / run_id).resolve()
    if path.parent != base:
        raise RunError(f"run id {run_id!r} leaves the output folder {out}")
    return Path(out) / run_id


def needs_rerun(traj: Trajectory) -> bool:
    """An episode that ended on an infrastructure or harness error: not finished, run it again."""
    return traj.status is Status.error and any(e.kind in ("infra", "internal") for e in traj.errors)


def read_trajectories(run: str | Path) -> list[Trajectory]:
    """The trajectories of a run folder (or a ``.jsonl`` or ``.jsonl.zst`` file), the latest
    line per episode.

    A torn last line (a crash mid-write) is ignored; a bad line elsewhere is a ``RunError``.
    """
    path = Path(run)
    file = trajectories_file(path) if path.is_dir() else path
    if not file.exists():
        if path.is_dir() and (path / MANIFEST).exists():
            return []
        raise RunError(f"{path}: no {TRAJECTORIES} here (is it a run folder?)")
    latest: dict[EpisodeKey, Trajectory] = {}
    with paused_gc():
        for _, traj in iter_trajectories(file):
            key = (traj.scenario_id, traj.trial)
            latest.pop(key, None)
            latest[key] = traj
    return list(latest.values())


def iter_latest(file: Path) -> Iterator[Trajectory]:
    """The latest trajectory of each episode, as ``read_trajectories`` lists them (file order
    of that latest line), one at a time: the file is read twice, the first time for each line's
    episode alone (``line_key``, from its first bytes), so nothing is held but the line number
    of each episode's latest line. A line that is no trajectory is a ``RunError``."""
    latest: dict[EpisodeKey, int] = {}
    for lineno, line in enumerate(_whole_lines(file), 1):
        if not line.strip():
            continue
        try:
            key = line_key(line)
        except (ValueError, KeyError, TypeError):
            traj = _parsed(line, file, lineno)  # says what is wrong with it
            key = (traj.scenario_id, traj.trial)
        latest.pop(key, None)
        latest[key] = lineno
    wanted = set(latest.values())
    for lineno, line in enumerate(_whole_lines(file), 1):
        if lineno in wanted:
            yield _parsed(line, file, lineno)


def _parsed(line: bytes, file: Path, lineno: int) -> Trajectory:
    try:
        return Trajectory.model_validate_json(line)
    except ValidationError as e:
        raise RunError(f"{file}:{lineno}: not a valid trajectory: {e.errors()[0]['msg']}") from e


def iter_trajectories(file: Path) -> Iterator[tuple[int, Trajectory]]:
    """Every whole line of a trajectories file as ``(line number, Trajectory)``, in file order
    (blank lines and a torn last line skipped; a bad line is a ``RunError``). Nothing is kept:
    one trajectory at a time is in memory."""
    for lineno, line in enumerate(_whole_lines(file), 1):
        if line.strip():
            yield lineno, _parsed(line, file, lineno)


def _whole_lines(file: Path) -> Iterator[bytes]:
    """The whole lines of a trajectories file (``trajectory_file.iter_lines``), a plain one
    read line by line."""
    if is_compressed(file):
        yield from iter_lines(file)
        return
    if not file.exists():
        return
    with file.open("rb") as fh:
        for line in fh:
            if not line.endswith(b"\n"):
                return  # bytes after the last newline: an unfinished write, never an episode
            yield line


def _cut_torn_tail(fd: int, compressed: bool) -> None:
    """Cut what a crash left after the last whole line (or frame)."""
    keep = whole_end(fd, compressed)
    if keep != os.fstat(fd).st_size:
        os.ftruncate(fd, keep)
        os.fsync(fd)


def _write_atomic(path: Path, text: str) -> None:
    _write_lines_atomic(path, iter([(0, text)]), 1)


_FRAME_BYTES = 1 << 18
"""Lines a rewritten compressed file puts in one frame (compaction: the lines are all there)."""


def _write_lines_atomic(path: Path, lines: Iterator[tuple[int, str]], count: int) -> None:
    """Write ``count`` texts, each given once with its place, in place order, atomically. Texts
    given in place order go straight to the file; the others wait until their turn. A ``.zst``
    file gets them as zstd frames of about ``_FRAME_BYTES`` each."""
    tmp = path.with_name(path.name + ".tmp")
    frames = FrameWriter(is_compressed(path))
    waiting: dict[int, str] = {}
    pending: list[bytes] = []
    at = 0
    with tmp.open("wb") as fh:
        for place, text in lines:
            waiting[place] = text
            while at in waiting:
                pending.append(waiting.pop(at).encode("utf-8"))
                at += 1
            if sum(map(len, pending)) >= _FRAME_BYTES or not frames.compressed:
                fh.write(frames.encode(pending))
                pending = []
        if pending:
            fh.write(frames.encode(pending))
        if at != count or waiting:
            raise RunError(f"{path}: changed while it was rewritten")
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
