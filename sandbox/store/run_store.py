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

Every other line is read whole or refused: a line that is not a trajectory, one longer than
``MAX_TRAJECTORY_LINE``, or one of an episode the manifest does not list is a ``RunError`` naming
the file and the line, so no reader drops an episode without saying so. An episode whose line
would be longer than that limit is stored without its steps (``trajectory_too_large``).
May import ``sandbox.store`` modules, ``sandbox.errors`` and ``agents`` only.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import itertools
import os
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import BinaryIO

from pydantic import ValidationError

from agents.trajectory import ErrorRecord, Status, Trajectory
from sandbox.errors import RunError
from sandbox.store.config import RECORDED, check_run_id
from sandbox.store.error_text import first_error
from sandbox.store.gc_pause import paused_gc
from sandbox.store.input_files import InputFileError, read_input
from sandbox.store.lock import RunLock
from sandbox.store.manifest import EpisodeKey, Manifest
from sandbox.store.trajectory_file import (
    COMPRESSED,
    MAX_LINE_BYTES,
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
    "MAX_TRAJECTORY_LINE",
    "SCORES",
    "TOO_LARGE",
    "TRAJECTORIES",
    "RunStore",
    "StoreFull",
    "needs_rerun",
    "iter_latest",
    "iter_trajectories",
    "parse_trajectory_line",
    "read_trajectories",
    "run_folder",
    "write_atomic",
    "write_new",
]

MANIFEST = "manifest.json"
TRAJECTORIES = PLAIN
SCORES = "scores.json"

MAX_TRAJECTORY_LINE = MAX_LINE_BYTES
"""The longest trajectory line (bytes) a run stores and its readers read: 64 MiB, some 250
model replies at their own limit (``model.max_reply_bytes``); a compressed run's frame holds at
most as much (``trajectory_file.MAX_FRAME_BYTES``)."""

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
            text = read_input(file).decode("utf-8")
            manifest = Manifest.model_validate_json(text, context=RECORDED)
        except InputFileError as e:  # a FIFO, a device, no permission: refused unread
            reason = str(e).removeprefix(f"{file}: ")
            raise RunError(f"{file}: cannot read the manifest: {reason}") from e
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
        file = self.trajectories_path
        latest_lines(file, self.listed(), self.max_line)  # refuses what readers refuse
        chosen: dict[EpisodeKey, int] = {}
        costs: dict[EpisodeKey, float] = {}
        for lineno, traj in iter_trajectories(file, self.max_line):
            if needs_rerun(traj):
                continue
            key = (traj.scenario_id, traj.trial)
            chosen[key] = lineno  # the latest line, in the place of the first (a dict's order)
            costs[key] = traj.usage.cost
        keep = set(chosen.values())
        order = {lineno: i for i, lineno in enumerate(chosen.values())}
        kept = (
            (order[lineno], traj.to_json_line())
            for lineno, traj in iter_trajectories(file, self.max_line)
            if lineno in keep
        )
        write_lines_atomic(file, kept, len(order))
        return costs

    @property
    def _frames(self) -> FrameWriter:
        if self._writer is None or self._writer.compressed != is_compressed(self.trajectories_path):
            self._writer = FrameWriter(is_compressed(self.trajectories_path))
        return self._writer

    def listed(self) -> set[EpisodeKey]:
        """The episodes the manifest lists (a line of any other is refused by the readers)."""
        return set(self.manifest.episode_keys())

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
        from there. A line over ``max_line`` (``MAX_TRAJECTORY_LINE``) is stored without the
        episode's steps (``too_large``)."""
        lines = [self._within_limit(line) for line in lines]
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

    def _within_limit(self, line: bytes) -> bytes:
        """``line``, or when it is over ``max_line`` the line of its episode without its steps."""
        if len(line) <= self.max_line:
            return line
        trajectory = Trajectory.from_json_line(line)
        return too_large(trajectory, len(line), self.max_line).to_json_line().encode("utf-8")

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
    """The trajectories of a run folder (or a ``.jsonl`` or ``.jsonl.zst`` file), the latest
    line per episode.

    A torn last line (a crash mid-write) is ignored; a bad line elsewhere, or in a run folder a
    line of an episode its manifest does not list, is a ``RunError`` naming file and line.
    """
    path = Path(run)
    file = trajectories_file(path) if path.is_dir() else path
    if not file.exists():
        if path.is_dir() and (path / MANIFEST).exists():
            return []
        raise RunError(f"{path}: no {TRAJECTORIES} here (is it a run folder?)")
    if not file.is_file():  # a folder, or a device that never ends (/dev/zero)
        raise RunError(f"{file}: not a regular file")
    listed = RunStore.open(path).listed() if (path / MANIFEST).is_file() else set()
    with paused_gc():
        return list(iter_latest(file, listed=listed, max_line=max_line))


def latest_lines(
    file: Path, listed: Collection[EpisodeKey] = (), max_line: int = MAX_TRAJECTORY_LINE
) -> dict[EpisodeKey, int]:
    """The number of each episode's latest line in ``file``, in file order of those lines,
    each line read for its episode alone (``line_key``, from its first bytes). ``listed``: the
    run's episodes (empty: any). Refused (``RunError`` naming file and line): a line too long,
    one that is no trajectory's, one of an episode ``listed`` does not hold, and a second line
    of an episode whose earlier line finished it, unless it repeats that line byte for byte (an
    episode runs again only after an infrastructure or harness error); that rare case is checked
    by parsing the earlier lines afterwards, so nothing but numbers and digests is held."""
    latest: dict[EpisodeKey, tuple[int, bytes]] = {}
    again: list[tuple[int, int, EpisodeKey]] = []
    for lineno, line in enumerate(_whole_lines(file, max_line), 1):
        if not line.strip():
            continue
        where = f"{file}:{lineno}"
        if len(line) > max_line:
            parse_trajectory_line(line, where, max_line)  # raises: too long
        try:
            key = line_key(line)
        except (ValueError, KeyError, TypeError):
            traj = parse_trajectory_line(line, where, max_line)  # says what is wrong with it
            key = (traj.scenario_id, traj.trial)
        if listed and key not in listed:
            name = f"episode {key[0]!r} trial {key[1]}"
            raise RunError(f"{where}: {name} is not one of the {len(listed)} its manifest lists")
        digest = hashlib.blake2b(line, digest_size=16).digest()
        before = latest.pop(key, None)
        if before is not None and before[1] != digest:
            again.append((before[0], lineno, key))
        latest[key] = (lineno, digest)
    if again:
        _check_ran_again(file, again, max_line)
    return {key: lineno for key, (lineno, _) in latest.items()}


def _check_ran_again(file: Path, again: list[tuple[int, int, EpisodeKey]], max_line: int) -> None:
    """``RunError`` for the first episode in ``again`` (earlier line, later line, episode) whose
    earlier line finished it."""
    earlier = {first: (later, key) for first, later, key in again}
    for lineno, line in enumerate(_whole_lines(file, max_line), 1):
        if lineno not in earlier:
            continue
        if needs_rerun(parse_trajectory_line(line, f"{file}:{lineno}", max_line)):
            continue
        later, key = earlier[lineno]
        raise RunError(
            f"{file}:{later}: episode {key[0]!r} trial {key[1]} is recorded already, finished, "
            f"at line {lineno}; an episode has one line unless it ran again after an "
            "infrastructure error"
        )


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


def iter_latest(
    file: Path, *, listed: Collection[EpisodeKey] = (), max_line: int = MAX_TRAJECTORY_LINE
) -> Iterator[Trajectory]:
    """The latest trajectory of each episode, as ``read_trajectories`` lists them (file order
    of that latest line), one at a time: the file is read twice, the first time for each line's
    episode alone (``latest_lines``, which refuses what no reader may read past), so nothing is
    held but the line number of each episode's latest line. ``listed``: the run's episodes."""
    wanted = set(latest_lines(file, listed, max_line).values())
    for lineno, line in enumerate(_whole_lines(file, max_line), 1):
        if lineno in wanted:
            yield parse_trajectory_line(line, f"{file}:{lineno}", max_line)


def iter_trajectories(
    file: Path, max_line: int = MAX_TRAJECTORY_LINE
) -> Iterator[tuple[int, Trajectory]]:
    """Every whole line of a trajectories file as ``(line number, Trajectory)``, in file order
    (blank lines and a torn last line skipped; a bad line is a ``RunError``). Nothing is kept:
    one trajectory at a time is in memory."""
    for lineno, line in enumerate(_whole_lines(file, max_line), 1):
        if line.strip():
            yield lineno, parse_trajectory_line(line, f"{file}:{lineno}", max_line)


def _whole_lines(file: Path, max_line: int = MAX_TRAJECTORY_LINE) -> Iterator[bytes]:
    """The whole lines of a trajectories file, without their newline (a compressed one:
    ``trajectory_file.iter_lines``); a plain one read line by line, none read past
    ``max_line`` bytes (such a line is a ``RunError``). A file that is no regular file (a link
    to a device that never ends) is refused unread."""
    if not file.exists():
        return
    if not file.is_file():
        raise RunError(f"{file}: not a regular file")
    if is_compressed(file):
        for line in iter_lines(file):
            yield line[:-1] if line.endswith(b"\n") else line
        return
    with file.open("rb") as fh:
        for lineno in itertools.count(1):
            line = fh.readline(max_line + 2)
            if not line.endswith(b"\n"):
                if len(line) == max_line + 2:
                    parse_trajectory_line(line, f"{file}:{lineno}", max_line)  # raises: too long
                return  # bytes after the last newline: an unfinished write, never an episode
            yield line[:-1]


def _cut_torn_tail(fd: int, compressed: bool) -> None:
    """Cut what a crash left after the last whole line (or frame)."""
    keep = whole_end(fd, compressed)
    if keep != os.fstat(fd).st_size:
        os.ftruncate(fd, keep)
        os.fsync(fd)


def write_new(path: Path, data: str | bytes) -> None:
    """Write ``data`` (text as UTF-8) to ``path`` as a new file: whatever was there, a symlink
    to anything included, is replaced, never written through."""
    path.unlink(missing_ok=True)
    with path.open("xb") as fh:
        fh.write(data.encode("utf-8") if isinstance(data, str) else data)


def write_atomic(path: Path, text: str | Iterable[str]) -> None:
    """Replace ``path`` with ``text`` (or its pieces, in order) at once: a temporary file of its
    own in the same folder (two processes writing one file never share one), fsynced, renamed
    over it, the folder fsynced. ``RunError`` naming the file when the folder is read-only,
    full or gone."""
    pieces = [text] if isinstance(text, str) else text
    _replace(path, lambda fh: fh.writelines(piece.encode("utf-8") for piece in pieces))


_FRAME_BYTES = 1 << 18
"""Lines a rewritten compressed file puts in one frame (compaction: the lines are all there)."""


def write_lines_atomic(path: Path, lines: Iterator[tuple[int, str]], count: int) -> None:
    """Write ``count`` texts, each given once with its place, in place order, atomically
    (``write_atomic``). Texts given in place order go straight to the file; the others wait
    until their turn. A ``.zst`` file gets them as zstd frames of about ``_FRAME_BYTES`` each."""

    def write(fh: BinaryIO) -> None:
        frames = FrameWriter(is_compressed(path))
        waiting: dict[int, str] = {}
        pending: list[bytes] = []
        at = 0
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

    _replace(path, write)


def _replace(path: Path, write: Callable[[BinaryIO], object]) -> None:
    tmp = path.with_name(f"{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        with tmp.open("wb") as fh:
            write(fh)
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
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
