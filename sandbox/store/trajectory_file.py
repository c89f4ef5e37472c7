"""The trajectories file of a run folder, plain or compressed, read as blocks of whole lines.

``trajectories.jsonl`` holds one JSON line per finished episode. ``trajectories.jsonl.zst``
(``--compress``) holds the same lines as a sequence of independent zstd frames, one per group
commit, each frame whole lines: the file is an ordinary multi-frame zstd file (``zstd -d``
reads it), and a frame is appended with one ``write`` exactly as a group of plain lines is.

A crash can leave a torn tail: bytes after the last newline of a plain file, an unfinished last
frame of a compressed one. ``blocks`` stops before it, ``whole_end`` says where it starts (opening
the file for appending cuts it there). A compressed file's frames are found by walking their
headers (the frame header, then each block's 3-byte header, then the checksum), so finding the
torn tail decompresses nothing.

A frame holds at most ``MAX_FRAME_BYTES`` of lines once decompressed (the 64 MiB a trajectory
line may take, ``MAX_TRAJECTORY_LINE``): ``FrameWriter`` splits a larger group into several
frames, and every reader decompresses a frame a chunk at a time and refuses (``RunError`` naming
the file, the frame's offset and the limit) one that would inflate past it, so a 19 KB frame
that inflates to 600 MB costs no more than the limit. A trajectories file is read only when it
is a regular file (``open_run_file``: a FIFO would block the reader, ``/dev/zero`` never end),
and a plain line is never held past the same limit. May import ``sandbox.errors`` and
``sandbox.store.input_files`` only.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import zstandard

from sandbox.errors import RunError
from sandbox.store.input_files import InputFileError, open_regular

__all__ = [
    "COMPRESSED",
    "MAX_FRAME_BYTES",
    "MAX_LINE_BYTES",
    "PLAIN",
    "Block",
    "FrameWriter",
    "blocks",
    "is_compressed",
    "iter_lines",
    "line_key",
    "open_run_file",
    "read_block",
    "trajectories_file",
    "whole_end",
]

PLAIN = "trajectories.jsonl"
COMPRESSED = "trajectories.jsonl.zst"
MAX_LINE_BYTES = 64 * 2**20
"""The longest trajectory line (bytes, its newline included) a run stores and its readers read:
64 MiB (``sandbox.store.run_store.MAX_TRAJECTORY_LINE``)."""
MAX_FRAME_BYTES = MAX_LINE_BYTES
"""The most bytes of lines one zstd frame holds decompressed; a frame that inflates past it is
refused by every reader, unread beyond it."""
_MAX_WINDOW = 1 << 26
"""The largest zstd window a frame may ask of the decoder (the writer's level 3 asks 2 MiB)."""
ZSTD_LEVEL = 3
"""zstd's default level: 3.6x on the default suite's lines one frame each, ~30 us a line."""
_CHUNK = 1 << 20
_MAGIC = b"\x28\xb5\x2f\xfd"
_SKIPPABLE = 0x184D2A50  # .. 0x184D2A5F: a skippable frame (4-byte magic, 4-byte size)


def trajectories_file(folder: Path, compress: bool = False) -> Path:
    """The trajectories file of a run folder: the one that exists, else the one ``compress``
    asks for. A run writes one of the two; a folder holding both (a stale compressed file
    beside the run's plain one, or the other way round) is a ``RunError`` naming both, never
    one read silently in place of the other."""
    zst, plain = folder / COMPRESSED, folder / PLAIN
    if os.path.lexists(zst) and os.path.lexists(plain):
        raise RunError(
            f"{folder} holds both {PLAIN} and {COMPRESSED}; a run writes one of them: move "
            "away the one its manifest does not name (output.compress)"
        )
    if os.path.lexists(zst):
        return zst
    if os.path.lexists(plain) or not compress:
        return plain
    return zst


def is_compressed(file: Path) -> bool:
    return file.name.endswith(".zst")


@dataclass(frozen=True)
class Block:
    """Whole lines of a trajectories file: ``data`` (decompressed), stored at ``offset`` in
    ``size`` bytes of the file (a plain file's block is its lines as they are)."""

    offset: int
    size: int
    data: bytes

    @property
    def end(self) -> int:
        return self.offset + self.size


def blocks(file: Path, start: int = 0) -> Iterator[Block]:
    """The blocks of whole lines from byte ``start`` (a block boundary) on, in file order; a torn
    tail is left out. A compressed file's block is one frame; a plain file's, a run of lines."""
    if not os.path.lexists(file):
        return
    with open_run_file(file) as fh:
        fh.seek(start)
        if is_compressed(file):
            dctx = _decompressor()
            for offset, frame in _frames(fh, start, file):
                yield Block(offset, len(frame), _decompress(dctx, frame, file, offset))
        else:
            yield from _plain_blocks(fh, start)


def open_run_file(file: Path) -> BinaryIO:
    """``file`` opened for reading when it is a regular file; a FIFO, a device, a folder (or a
    link to one) is a ``RunError``, unread (``sandbox.store.input_files.open_regular``)."""
    try:
        return open_regular(file)
    except InputFileError as e:
        raise RunError(str(e)) from None


def iter_lines(file: Path) -> Iterator[bytes]:
    """Every whole line (newline included) of a trajectories file, in file order."""
    for block in blocks(file):
        yield from block.data.splitlines(keepends=True)


def read_block(fh: BinaryIO, compressed: bool, offset: int, size: int) -> bytes:
    """The lines of one block, read at ``offset`` (``size`` bytes) of an open file."""
    fh.seek(offset)
    data = fh.read(size)
    if not compressed:
        return data
    return _decompress(_decompressor(), data, Path(fh.name), offset)


def whole_end(fd: int, compressed: bool) -> int:
    """Where the whole blocks of an open file end: its size, or where a torn tail starts."""
    size = os.fstat(fd).st_size
    if size == 0:
        return 0
    if not compressed:
        return _last_newline_end(fd, size)
    with os.fdopen(os.dup(fd), "rb") as fh:
        fh.seek(0)
        end = 0
        for offset, frame in _frames(fh, 0, Path(f"fd {fd}")):
            end = offset + len(frame)
        return end


class FrameWriter:
    """Turns groups of whole lines into what is appended: the lines themselves, or zstd frames
    of them (each with its content size and checksum, so a reader can tell a torn frame): one
    frame, or as many as keep each within ``max_frame`` bytes of lines."""

    def __init__(self, compressed: bool, max_frame: int = MAX_FRAME_BYTES) -> None:
        self.compressed = compressed
        self.max_frame = max_frame
        self._cctx = (
            zstandard.ZstdCompressor(level=ZSTD_LEVEL, write_checksum=True) if compressed else None
        )

    def encode(self, lines: Iterable[bytes]) -> bytes:
        if self._cctx is None:
            return b"".join(lines)
        frames: list[bytes] = []
        group: list[bytes] = []
        size = 0
        for line in lines:
            if group and size + len(line) > self.max_frame:
                frames.append(self._cctx.compress(b"".join(group)))
                group, size = [], 0
            group.append(line)
            size += len(line)
        frames.append(self._cctx.compress(b"".join(group)))
        return b"".join(frames)


_ID = re.compile(rb'"scenario_id":\s*("(?:[^"\\]|\\.)*")')
_TRIAL = re.compile(rb'"trial":\s*(-?\d+)')
_HEAD = 1024
"""Bytes at the start of a line where the episode's id is looked for before parsing it all."""


def line_key(line: bytes) -> tuple[str, int]:
    """The episode (task id, trial) a trajectory line holds, from its first bytes when they say
    (a JSON key inside a string cannot match: its quotes are escaped), else from the whole line
    (``ValueError``, ``KeyError`` or ``TypeError`` when it is no trajectory's)."""
    head = line[:_HEAD]
    found, trial = _ID.search(head), _TRIAL.search(head)
    if found and trial:
        return (json.loads(found.group(1)), int(trial.group(1)))
    data = json.loads(line)
    return (str(data["scenario_id"]), int(data.get("trial") or 0))


# -- plain files ---------------------------------------------------------------------------------


def _plain_blocks(fh: BinaryIO, start: int) -> Iterator[Block]:
    offset, rest = start, b""
    while chunk := fh.read(_CHUNK):
        data = rest + chunk
        end = data.rfind(b"\n") + 1
        if end:
            yield Block(offset, end, data[:end])
            offset += end
        rest = data[end:]
        if len(rest) > MAX_LINE_BYTES:  # no line is this long: never hold more of it
            raise RunError(
                f"{fh.name}: byte {offset}: a line over {MAX_LINE_BYTES} bytes, the most a "
                "trajectory line may take (MAX_TRAJECTORY_LINE)"
            )


def _last_newline_end(fd: int, size: int) -> int:
    if os.pread(fd, 1, size - 1) == b"\n":
        return size
    end = size
    while end > 0:
        start = max(0, end - 65536)
        nl = os.pread(fd, end - start, start).rfind(b"\n")
        if nl >= 0:
            return start + nl + 1
        end = start
    return 0


# -- compressed files ----------------------------------------------------------------------------


def _frames(fh: BinaryIO, start: int, file: Path) -> Iterator[tuple[int, bytes]]:
    """``(offset, frame bytes)`` of each whole frame from ``start``; an unfinished last frame is
    left out (a torn write); bytes that start no frame are a ``RunError``."""
    buf, base = b"", start  # buf holds the file from offset base
    pos = 0
    while True:
        try:
            end = _frame_end(buf, pos)
        except ValueError as e:
            raise RunError(f"{file}: byte {base + pos}: not a zstd frame ({e})") from e
        if end is None:  # the frame goes on past what is read: read more, or it is torn
            chunk = fh.read(_CHUNK)
            if not chunk:
                return
            buf, base, pos = buf[pos:] + chunk, base + pos, 0
            continue
        if end > pos and buf[pos : pos + 4] == _MAGIC:
            yield base + pos, buf[pos:end]
        pos = end


def _frame_end(buf: bytes, pos: int) -> int | None:
    """Where the frame at ``pos`` ends, or None when ``buf`` ends first (``ValueError``: no
    frame starts there). Reads the headers only: RFC 8878, sections 3.1.1 and 3.1.1.2."""
    if len(buf) - pos < 8:
        return None if len(buf) - pos < 4 or buf[pos : pos + 4] == _MAGIC else _skippable(buf, pos)
    if buf[pos : pos + 4] != _MAGIC:
        return _skippable(buf, pos)
    descriptor = buf[pos + 4]
    single = (descriptor >> 5) & 1
    header = 5 + (1 - single) + (0, 1, 2, 4)[descriptor & 3]
    header += ((1 if single else 0), 2, 4, 8)[descriptor >> 6]
    at = pos + header
    while True:
        if at + 3 > len(buf):
            return None
        block = int.from_bytes(buf[at : at + 3], "little")
        kind, size = (block >> 1) & 3, block >> 3
        if kind == 3:
            raise ValueError("reserved block type")
        at += 3 + (1 if kind == 1 else size)
        if block & 1:
            break
    at += 4 * ((descriptor >> 2) & 1)
    return at if at <= len(buf) else None


def _skippable(buf: bytes, pos: int) -> int | None:
    magic = int.from_bytes(buf[pos : pos + 4], "little")
    if magic & 0xFFFFFFF0 != _SKIPPABLE:
        raise ValueError("bad magic number")
    if len(buf) - pos < 8:
        return None
    end = pos + 8 + int.from_bytes(buf[pos + 4 : pos + 8], "little")
    return end if end <= len(buf) else None


def _decompressor() -> zstandard.ZstdDecompressor:
    return zstandard.ZstdDecompressor(max_window_size=_MAX_WINDOW)


def _decompress(
    dctx: zstandard.ZstdDecompressor,
    frame: bytes,
    file: Path,
    offset: int,
    limit: int = MAX_FRAME_BYTES,
) -> bytes:
    """The lines of one frame, decompressed a chunk at a time: ``RunError`` for a frame that
    does not decompress or would inflate past ``limit`` bytes (refused as soon as its header
    says so, else once that much has come out: no more is held)."""
    over = RunError(
        f"{file}: byte {offset}: a zstd frame that inflates past {limit} bytes, the most a "
        "frame of trajectory lines holds (MAX_TRAJECTORY_LINE); the file is not one a run wrote"
    )
    try:
        declared = zstandard.frame_content_size(frame)
        if declared > limit:
            raise over
        chunks: list[bytes] = []
        size = 0
        for chunk in dctx.read_to_iter(frame, read_size=1 << 16, write_size=1 << 20):
            size += len(chunk)
            if size > limit:
                raise over
            chunks.append(chunk)
    except zstandard.ZstdError as e:
        raise RunError(f"{file}: byte {offset}: a zstd frame that does not decompress ({e})") from e
    data = b"".join(chunks)
    if data and not data.endswith(b"\n"):
        raise RunError(f"{file}: byte {offset}: a zstd frame that does not end a line")
    return data
