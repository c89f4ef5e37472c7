"""Where a crash's torn tail starts, in a plain file (after the last newline) and in a compressed
one (after the last whole zstd frame, found from the frame and block headers of RFC 8878 alone,
whatever optional fields a frame carries), and the blocks of whole lines a reader gets."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import zstandard

from sandbox.errors import RunError
from sandbox.store.trajectory_file import (
    COMPRESSED,
    PLAIN,
    FrameWriter,
    blocks,
    iter_lines,
    line_key,
    read_block,
    trajectories_file,
    whole_end,
)

MAGIC = b"\x28\xb5\x2f\xfd"


def _end(path: Path, compressed: bool) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        return whole_end(fd, compressed)
    finally:
        os.close(fd)


def _frame(
    blocks_: list[tuple[int, bytes]],
    *,
    single: bool = False,
    dict_id: int = 0,
    content_size: int = 0,
    checksum: bool = False,
) -> bytes:
    """A zstd frame built from RFC 8878 section 3.1.1: ``dict_id`` the Dictionary_ID field's
    size (0, 1, 2 or 4 bytes), ``content_size`` the Frame_Content_Size field's (0, 1 only when
    single-segment, 2, 4 or 8), ``blocks_`` (type, content): raw (0), RLE (1, one byte that
    repeats ``len(content)`` times), compressed (2: the content as it is stored)."""
    fcs_flag = {0: 0, 1: 0, 2: 1, 4: 2, 8: 3}[content_size]
    assert content_size != 1 or single
    descriptor = (fcs_flag << 6) | (int(single) << 5) | (int(checksum) << 2)
    descriptor |= {0: 0, 1: 1, 2: 2, 4: 3}[dict_id]
    header = MAGIC + bytes([descriptor]) + (b"" if single else b"\x48")  # a window descriptor
    header += b"\x07" * dict_id + b"\x01" * content_size
    body = b""
    for i, (kind, content) in enumerate(blocks_):
        last = int(i == len(blocks_) - 1)
        size = len(content)
        body += ((size << 3) | (kind << 1) | last).to_bytes(3, "little")
        body += content[:1] if kind == 1 else content
    return header + body + (b"\xaa\xbb\xcc\xdd" if checksum else b"")


LAYOUTS = {
    "raw, single segment, 1-byte size": _frame([(0, b"a\n")], single=True, content_size=1),
    "rle and raw blocks, window, checksum": _frame(
        [(1, b"x" * 300), (0, b"\n" * 5)], checksum=True
    ),
    "1-byte dictionary id, 2-byte size": _frame([(2, b"\x01\x02\x03")], dict_id=1, content_size=2),
    "2-byte dictionary id, 4-byte size": _frame([(0, b"yz\n")], dict_id=2, content_size=4),
    "4-byte dictionary id, 8-byte size, checksum": _frame(
        [(0, b"q\n"), (0, b"r\n")], dict_id=4, content_size=8, checksum=True
    ),
    "single segment, 2-byte size": _frame([(1, b"\n" * 4)], single=True, content_size=2),
}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_frame_cut_anywhere_is_a_torn_tail_and_a_whole_one_is_kept(
    tmp_path: Path, layout: str
) -> None:
    """A whole frame of this layout after a real one: the file's whole part ends after it; cut
    at any byte, the whole part ends where it starts."""
    first = zstandard.ZstdCompressor(write_checksum=True).compress(b"a line\n")
    frame = LAYOUTS[layout]
    path = tmp_path / COMPRESSED
    path.write_bytes(first + frame + first)
    assert _end(path, True) == len(first) * 2 + len(frame)
    for cut in range(len(frame)):
        path.write_bytes(first + frame[:cut])
        assert _end(path, True) == len(first), cut
    path.write_bytes(first + frame)
    assert _end(path, True) == len(first + frame)


def test_a_compressed_file_whose_only_frame_is_torn_has_no_whole_part(tmp_path: Path) -> None:
    frame = zstandard.ZstdCompressor(write_checksum=True).compress(b"a line\n")
    path = tmp_path / COMPRESSED
    for cut in (1, 5, len(frame) - 1):
        path.write_bytes(frame[:cut])
        assert _end(path, True) == 0, cut
        assert list(blocks(path)) == []


def test_skippable_frames_are_passed_over_and_hold_no_lines(tmp_path: Path) -> None:
    real = zstandard.ZstdCompressor().compress(b"one\n")
    skip = (0x184D2A5F).to_bytes(4, "little") + (3).to_bytes(4, "little") + b"abc"
    path = tmp_path / COMPRESSED
    path.write_bytes(real + skip + real)
    assert _end(path, True) == len(real) * 2 + len(skip)
    assert [b.data for b in blocks(path)] == [b"one\n", b"one\n"]
    assert [b.offset for b in blocks(path)] == [0, len(real) + len(skip)]
    for cut in range(1, len(skip) + 1):  # a skippable frame last holds no line: cut with it
        path.write_bytes(real + skip[:cut])
        assert _end(path, True) == len(real), cut
        assert [b.data for b in blocks(path)] == [b"one\n"]


@pytest.mark.parametrize(
    ("tail", "why"),
    [
        (b"\x00\x01\x02\x03\x04\x05\x06\x07\x08", "bad magic number"),
        (b"\x00\x01\x02\x03\x04", "bad magic number"),  # too short for a skippable frame's size
        (b"\x00\x01\x02\x03", "bad magic number"),  # four bytes: enough to tell
        (MAGIC + b"\x20\x00" + (7).to_bytes(3, "little"), "reserved block type"),
    ],
)
def test_bytes_that_start_no_frame_are_named_with_their_offset(
    tmp_path: Path, tail: bytes, why: str
) -> None:
    real = zstandard.ZstdCompressor().compress(b"one\n")
    path = tmp_path / COMPRESSED
    path.write_bytes(real + tail)
    with pytest.raises(RunError) as caught:
        list(blocks(path))
    assert str(caught.value) == f"{path}: byte {len(real)}: not a zstd frame ({why})"
    with pytest.raises(RunError, match=rf": byte {len(real)}: not a zstd frame \({why}\)"):
        _end(path, True)


def test_a_frame_that_does_not_decompress_or_end_a_line_is_named(tmp_path: Path) -> None:
    path = tmp_path / COMPRESSED
    good = zstandard.ZstdCompressor().compress(b"one\n")
    half = zstandard.ZstdCompressor().compress(b"no newline")
    path.write_bytes(good + half)
    with pytest.raises(RunError) as caught:
        list(iter_lines(path))
    assert str(caught.value) == (f"{path}: byte {len(good)}: a zstd frame that does not end a line")
    bad = _frame([(2, b"\xff\xff\xff\xff")], single=True, content_size=1)
    path.write_bytes(good + bad)
    with pytest.raises(RunError, match=rf"{len(good)}: a zstd frame that does not decompress \("):
        list(iter_lines(path))


def test_a_plain_files_torn_tail_starts_after_its_last_newline(tmp_path: Path) -> None:
    path = tmp_path / PLAIN
    path.write_bytes(b"")
    assert _end(path, False) == 0
    path.write_bytes(b"a\nbb\n")
    assert _end(path, False) == 5
    path.write_bytes(b"a\nbb\ncc")
    assert _end(path, False) == 5
    path.write_bytes(b"no newline at all")
    assert _end(path, False) == 0
    far = b"x" * 10 + b"\n" + b"y" * 200_000  # the newline is more than one 64 KiB read back
    path.write_bytes(far)
    assert _end(path, False) == 11
    path.write_bytes(b"\n" + b"y" * 65_535)  # the newline is the first byte of the last read
    assert _end(path, False) == 1
    path.write_bytes(b"\n" + b"y" * 65_536)  # ... of a read of one byte, after a full one
    assert _end(path, False) == 1
    path.write_bytes(b"y" * 65_536 + b"\n" + b"z")
    assert _end(path, False) == 65_537


def test_a_plain_file_is_read_as_blocks_of_whole_lines_from_any_line(tmp_path: Path) -> None:
    """Lines longer than a read (1 MiB) are whole in their block; a block starts where the
    previous ended; the torn tail is in none."""
    path = tmp_path / PLAIN
    long = b"L" * (1 << 20) + b"\n"
    path.write_bytes(b"a\n" + long + b"b\n" + b"torn")
    found = list(blocks(path))
    assert b"".join(b.data for b in found) == b"a\n" + long + b"b\n"
    assert [b.offset for b in found] == [0, *[b.end for b in found[:-1]]]
    assert all(b.data.endswith(b"\n") and b.size == len(b.data) for b in found)
    assert [b.data for b in blocks(path, start=len(b"a\n" + long))] == [b"b\n"]
    assert list(iter_lines(path)) == [b"a\n", long, b"b\n"]
    content = b"a\n" + long + b"b\n" + long + b"c\n" + b"torn"
    path.write_bytes(content)
    found = list(blocks(path))
    assert len(found) >= 3
    assert [content[b.offset : b.end] for b in found] == [b.data for b in found]
    assert b"".join(b.data for b in found) == content.removesuffix(b"torn")
    assert list(blocks(tmp_path / "absent.jsonl")) == []
    with path.open("rb") as fh:
        assert read_block(fh, False, 2 + len(long), 2) == b"b\n"


def test_a_compressed_block_is_read_back_alone_from_its_offset(tmp_path: Path) -> None:
    writer = FrameWriter(True)
    path = tmp_path / COMPRESSED
    path.write_bytes(writer.encode([b"a\n", b"b\n"]) + writer.encode([b"c\n"]))
    found = list(blocks(path))
    assert [b.data for b in found] == [b"a\nb\n", b"c\n"]
    assert [b.data for b in blocks(path, start=found[1].offset)] == [b"c\n"]
    with path.open("rb") as fh:
        assert read_block(fh, True, found[1].offset, found[1].size) == b"c\n"
    assert FrameWriter(False).encode([b"a\n", b"b\n"]) == b"a\nb\n"
    frame = writer.encode([b"c\n"])  # with its checksum: zstd -t, and readers, tell it whole
    params = zstandard.get_frame_parameters(frame)
    assert (params.has_checksum, params.content_size) == (True, 2)


def test_the_trajectories_file_a_run_uses_is_the_one_it_started_with(tmp_path: Path) -> None:
    assert trajectories_file(tmp_path) == tmp_path / PLAIN
    assert trajectories_file(tmp_path, compress=True) == tmp_path / COMPRESSED
    (tmp_path / PLAIN).touch()
    assert trajectories_file(tmp_path, compress=True) == tmp_path / PLAIN
    (tmp_path / COMPRESSED).touch()  # a stale compressed file beside it: neither is guessed
    with pytest.raises(RunError, match="holds both trajectories.jsonl and trajectories.jsonl.zst"):
        trajectories_file(tmp_path)


def test_a_lines_episode_is_read_from_its_first_bytes_or_the_whole_line() -> None:
    assert line_key(b'{"scenario_id": "a\\"b", "trial": -2, "x": 1}') == ('a"b', -2)
    assert line_key(b'{"note": "\\"scenario_id\\": \\"fake\\"", "scenario_id": "real"}') == (
        "real",
        0,
    )
    padded = b'{"pad": "' + b"p" * 1100 + b'", "scenario_id": "far", "trial": 3}'
    assert line_key(padded) == ("far", 3)
    assert line_key(b'{"scenario_id": 7, "trial": null}') == ("7", 0)
    with pytest.raises(KeyError):
        line_key(b'{"trial": 1}')
    with pytest.raises(ValueError):
        line_key(b"not json")


def test_a_skippable_frame_longer_than_one_read_is_passed_over_whole(tmp_path: Path) -> None:
    """Frames are found across the 1 MiB reads: a skippable frame of 1.5 MiB, then a frame of
    lines, read at the offset where it starts."""
    payload = b"\x00" * (3 << 19)
    skip = (0x184D2A50).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + payload
    real = zstandard.ZstdCompressor().compress(b"after\n")
    path = tmp_path / COMPRESSED
    path.write_bytes(skip + real)
    assert [(b.offset, b.data) for b in blocks(path)] == [(len(skip), b"after\n")]
    assert _end(path, True) == len(skip + real)
    first = zstandard.ZstdCompressor().compress(b"before\n")
    path.write_bytes(first + skip + real)  # the frame over the read starts inside the first
    found = [(b.offset, b.data) for b in blocks(path)]
    assert found == [(0, b"before\n"), (len(first + skip), b"after\n")]
    assert _end(path, True) == len(first + skip + real)
