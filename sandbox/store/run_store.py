"""The run folder: ``manifest.json``, ``trajectories.jsonl`` and ``scores.json`` (``RunStore``).

::

    runs/<run-id>/
        manifest.json       Manifest: config, suite fingerprint, versions, git sha, status, times
        trajectories.jsonl  one Trajectory per finished episode, appended and fsynced one by one
        scores.json         written at the end of the run

Crash safety: each trajectory is one ``write`` of a whole line on an ``O_APPEND`` descriptor,
followed by ``fsync``, under a lock. A crash can at worst leave a torn last line; opening the store
for appending cuts it. Readers ignore a torn last line. Resuming compacts the file (atomically)
to one line per episode, dropping infrastructure- and harness-error episodes so they run again.

Every other line is read whole or refused: a line that is not a trajectory, one longer than
``MAX_TRAJECTORY_LINE``, or one of an episode the manifest does not list is a ``RunError`` naming
the file and the line, so no reader drops an episode without saying so. An episode whose line
would be longer than that limit is stored without its steps (``trajectory_too_large``).
May import ``sandbox.store`` modules, ``sandbox.errors`` and ``agents`` only.
"""

from __future__ import annotations

import contextlib
import errno
import os
import threading
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.trajectory import ErrorRecord, Status, Trajectory
from sandbox.errors import RunError
from sandbox.store.config import RECORDED, check_run_id
from sandbox.store.error_text import first_error
from sandbox.store.gc_pause import paused_gc
from sandbox.store.lock import RunLock
from sandbox.store.manifest import EpisodeKey, Manifest

__all__ = [
    "MANIFEST",
    "MAX_TRAJECTORY_LINE",
    "SCORES",
    "TOO_LARGE",
    "TRAJECTORIES",
    "RunStore",
    "needs_rerun",
    "parse_trajectory_line",
    "read_trajectories",
    "run_folder",
    "write_atomic",
    "write_new",
]

MANIFEST = "manifest.json"
TRAJECTORIES = "trajectories.jsonl"
SCORES = "scores.json"

MAX_TRAJECTORY_LINE = 64 * 2**20
"""The longest trajectory line (bytes) a run stores and its readers read: 64 MiB, some 250
model replies at their own limit (``model.max_reply_bytes``)."""

TOO_LARGE = "trajectory_too_large"
"""The ``end_reason`` of an episode stored without its steps: its line was over the limit."""


class RunStore:
    """One run folder. Use ``create`` for a new run, ``open`` for an existing one."""

    max_line: int = MAX_TRAJECTORY_LINE
    """The longest trajectory line this store appends (bytes)."""

    def __init__(self, path: Path, manifest: Manifest) -> None:
        self.path = path
        self.manifest = manifest
        self.run_lock = RunLock(path, manifest.run_id)
        self._lock = threading.Lock()
        self._fd: int | None = None

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
        except OSError as e:
            raise RunError(f"{file}: cannot read the manifest: {e.strerror or e}") from e
        except ValidationError as e:
            raise RunError(f"{file}: not a valid manifest: {first_error(e)}") from e
        except ValueError as e:  # not UTF-8
            raise RunError(f"{file}: not a valid manifest: {e}") from e
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
        write_atomic(self.path / MANIFEST, text)

    def complete_if_finished(self) -> bool:
        """Mark a run ``completed`` that stored every episode but was cut off while scoring
        (its process is gone: nobody holds the lock). True when it did."""
        if self.manifest.status != "running" or self.run_lock.owner() is not None:
            return False
        done = {(t.scenario_id, t.trial) for t in self.trajectories() if not needs_rerun(t)}
        if not all(tuple(k) in done for k in self.manifest.episodes):
            return False
        self.manifest.status = "completed"
        self.manifest.ended_at = datetime.now(timezone.utc)
        self.write_manifest()
        return True

    # -- trajectories ----------------------------------------------------------------------------

    @property
    def trajectories_path(self) -> Path:
        return self.path / TRAJECTORIES

    def trajectories(self) -> list[Trajectory]:
        """The latest trajectory of each episode, in file order of that latest line."""
        return read_trajectories(self.path)

    def compact(self) -> dict[EpisodeKey, Trajectory]:
        """Rewrite the file atomically: one line per finished episode, infra errors dropped.

        Returns the finished episodes by key. Run before resuming, so re-runs never duplicate.
        """
        self.close()
        kept = {
            (t.scenario_id, t.trial): t for t in read_trajectories(self.path) if not needs_rerun(t)
        }
        write_atomic(self.trajectories_path, "".join(t.to_json_line() for t in kept.values()))
        return kept

    def append(self, trajectory: Trajectory) -> None:
        """Append one trajectory as one line, then fsync. Safe from several threads.

        A write that fails (a full disk, a file size limit) leaves the file as it was: the
        episode is not stored, the run stops with a ``RunError`` and resumes from there. A line
        over ``MAX_TRAJECTORY_LINE`` is stored without the episode's steps (``too_large``)."""
        data = trajectory.to_json_line().encode("utf-8")
        if len(data) > self.max_line:
            data = too_large(trajectory, len(data), self.max_line).to_json_line().encode("utf-8")
        with self._lock:
            try:
                fd = self._open_fd()
                start = os.fstat(fd).st_size
            except OSError as e:
                raise RunError(f"cannot write {self.trajectories_path}: {e.strerror}") from e
            try:
                written = os.write(fd, data)
                if written != len(data):
                    raise OSError(errno.ENOSPC, f"short write ({written}/{len(data)} bytes)")
                os.fsync(fd)
            except OSError as e:
                with contextlib.suppress(OSError):
                    os.ftruncate(fd, start)
                raise RunError(
                    f"cannot write {self.trajectories_path}: {e.strerror or e}; the episodes "
                    "stored so far are kept (--resume continues once there is room)"
                ) from e

    def _open_fd(self) -> int:
        if self._fd is None:
            fd = os.open(self.trajectories_path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
            _cut_torn_tail(fd)
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


def run_folder(out: str | Path, run_id: str) -> Path:
    """``out/run_id``, checked to be a folder directly inside ``out``."""
    try:
        check_run_id(run_id)
    except ValueError as e:
        raise RunError(str(e)) from e
    try:
        base = Path(out).resolve()
        path = (base / run_id).resolve()
    except (OSError, RuntimeError) as e:  # a symlink loop (RuntimeError before Python 3.13)
        raise RunError(f"cannot use the output folder {out}: {e}") from e
    if path.parent != base:
        raise RunError(f"run id {run_id!r} leaves the output folder {out}")
    return Path(out) / run_id


def too_large(trajectory: Trajectory, size: int, limit: int = MAX_TRAJECTORY_LINE) -> Trajectory:
    """The record of an episode whose line would be ``size`` bytes, over ``limit``: its outcome
    and usage without its steps, ended ``error`` / ``trajectory_too_large`` (the agent's failure:
    what it asked for and got was too much to keep)."""
    message = (
        f"its trajectory line was {size} bytes, over the limit of {limit} "
        "(MAX_TRAJECTORY_LINE): its steps are not kept"
    )
    kept = trajectory.model_copy(
        update={
            "status": Status.error,
            "end_reason": TOO_LARGE,
            "nodes": [],
            "chosen_path": [],
            "tree": {},
            "errors": [ErrorRecord(kind="agent", message=message)],
        }
    )
    if len(kept.to_json_line().encode("utf-8")) <= limit:
        return kept
    answer = trajectory.final_answer  # the inputs are what is too large: keep their absence said
    return kept.model_copy(
        update={
            "prompt": [],
            "functions": [],
            "final_answer": answer[:4096] if answer is not None else None,
            "errors": [ErrorRecord(kind="agent", message=message + ", nor its prompt")],
        }
    )


def needs_rerun(traj: Trajectory) -> bool:
    """An episode that ended on an infrastructure or harness error: not finished, run it again."""
    return traj.status is Status.error and any(e.kind in ("infra", "internal") for e in traj.errors)


def read_trajectories(run: str | Path, *, max_line: int = MAX_TRAJECTORY_LINE) -> list[Trajectory]:
    """The trajectories of a run folder (or a ``.jsonl`` file), the latest line per episode.

    A torn last line (a crash mid-write) is ignored; a bad line elsewhere, or in a run folder a
    line of an episode its manifest does not list, is a ``RunError`` naming file and line.
    """
    path = Path(run)
    file = path / TRAJECTORIES if path.is_dir() else path
    if not file.exists():
        if path.is_dir() and (path / MANIFEST).exists():
            return []
        raise RunError(f"{path}: no {TRAJECTORIES} here (is it a run folder?)")
    if not file.is_file():  # a folder, or a device that never ends (/dev/zero)
        raise RunError(f"{file}: not a regular file")
    try:
        raw = file.read_bytes()
    except OSError as e:
        raise RunError(f"{file}: cannot read it: {e.strerror or e}") from e
    listed = RunStore.open(path).manifest.episodes if (path / MANIFEST).is_file() else []
    lines = raw.split(b"\n")
    lines.pop()  # bytes after the last newline: an unfinished write, never an episode
    with paused_gc():
        return _latest_per_episode(file, lines, {tuple(k) for k in listed}, max_line)


def _latest_per_episode(
    file: Path, lines: list[bytes], listed: set[Any], max_line: int
) -> list[Trajectory]:
    """The latest line of each episode; ``listed``: the run's episodes (empty: any). An episode
    has a second line only when its first ended on an infrastructure or harness error (it ran
    again) or the second repeats the first byte for byte; any other second line would hide one
    recorded episode behind another, and is refused."""
    latest: dict[EpisodeKey, tuple[int, Trajectory]] = {}
    for lineno, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{file}:{lineno}"
        traj = parse_trajectory_line(line, where, max_line)
        key = (traj.scenario_id, traj.trial)
        name = f"episode {traj.scenario_id!r} trial {traj.trial}"
        if listed and key not in listed:
            raise RunError(f"{where}: {name} is not one of the {len(listed)} its manifest lists")
        before = latest.pop(key, None)
        if before is not None and not needs_rerun(before[1]) and lines[before[0] - 1] != line:
            raise RunError(
                f"{where}: {name} is recorded already, finished, at line {before[0]}; an "
                "episode has one line unless it ran again after an infrastructure error"
            )
        latest[key] = (lineno, traj)
    return [traj for _, traj in latest.values()]


def parse_trajectory_line(
    line: bytes, where: str, max_line: int = MAX_TRAJECTORY_LINE
) -> Trajectory:
    """One line of a trajectories file as a ``Trajectory``; ``RunError`` starting with
    ``where`` (``file:line``) when it is too long or not a valid trajectory."""
    if len(line) > max_line:
        raise RunError(
            f"{where}: a line of {len(line)} bytes, over the {max_line} bytes a trajectory may "
            "take (MAX_TRAJECTORY_LINE)"
        )
    try:
        return Trajectory.from_json_line(line)
    except ValidationError as e:
        problem = first_error(e).replace(" at line 1 column ", " at column ")  # the line's own
        raise RunError(f"{where}: not a valid trajectory: {problem}") from e
    except ValueError as e:  # json's reader, for a line escaping an unpaired surrogate
        raise RunError(f"{where}: not a valid trajectory: {e}") from e


def _cut_torn_tail(fd: int) -> None:
    size = os.fstat(fd).st_size
    if size == 0 or os.pread(fd, 1, size - 1) == b"\n":
        return
    keep = 0
    end = size
    while end > 0:
        start = max(0, end - 65536)
        block = os.pread(fd, end - start, start)
        nl = block.rfind(b"\n")
        if nl >= 0:
            keep = start + nl + 1
            break
        end = start
    os.ftruncate(fd, keep)
    os.fsync(fd)


def write_new(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` as a new file: whatever was there, a symlink
    to anything included, is replaced, never written through."""
    path.unlink(missing_ok=True)
    with path.open("xb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` at once: a temporary file of its own in the same folder
    (two processes writing one file never share one), fsynced, renamed over it, the folder
    fsynced. ``RunError`` naming the file when the folder is read-only, full or gone."""
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with tmp.open("w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise RunError(f"cannot write {path}: {e.strerror or e}") from e
