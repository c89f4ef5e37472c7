"""The store reads a run folder's files as files from elsewhere (issues 39 and 40): a
trajectories file that is no regular file is refused unread, a zstd frame is bounded as a line
is, a plain line is never held past the limit, and a folder holding both trajectories files is
refused naming both."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
import zstandard

from sandbox.errors import RunError
from sandbox.store import EpisodeIndex
from sandbox.store.input_files import (
    MAX_JSON_DEPTH,
    InputFileError,
    json_depth,
    json_lines,
    json_text,
    read_input,
    read_json,
    read_upto,
)
from sandbox.store.trajectory_file import (
    COMPRESSED,
    MAX_LINE_BYTES,
    PLAIN,
    FrameWriter,
    blocks,
    open_run_file,
    trajectories_file,
)


def test_a_folder_holding_both_trajectories_files_is_refused_naming_both(tmp_path: Path) -> None:
    assert trajectories_file(tmp_path) == tmp_path / PLAIN
    assert trajectories_file(tmp_path, compress=True) == tmp_path / COMPRESSED
    (tmp_path / COMPRESSED).write_bytes(b"")
    assert trajectories_file(tmp_path) == tmp_path / COMPRESSED
    (tmp_path / PLAIN).symlink_to(tmp_path / "gone")  # a dangling link counts as there
    with pytest.raises(RunError, match=f"holds both {PLAIN} and {COMPRESSED}"):
        trajectories_file(tmp_path)
    (tmp_path / COMPRESSED).unlink()
    assert trajectories_file(tmp_path, compress=True) == tmp_path / PLAIN


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_a_trajectories_file_that_is_no_regular_file_is_refused_unread(
    kind: str, tmp_path: Path
) -> None:
    file = tmp_path / PLAIN
    if kind == "fifo":
        os.mkfifo(file)
    elif kind == "device":
        file.symlink_to("/dev/zero")
    else:
        file.mkdir()
    with pytest.raises(RunError, match="not a regular file"):
        open_run_file(file)
    with pytest.raises(RunError, match="not a regular file"):
        list(blocks(file))
    with pytest.raises(RunError, match="not a regular file"):
        EpisodeIndex(file).refresh()


def test_a_plain_line_is_never_held_past_the_limit(tmp_path: Path) -> None:
    file = tmp_path / PLAIN
    with file.open("wb") as fh:
        fh.write(b"{}\n")
        fh.truncate(3 + MAX_LINE_BYTES + 2 * (1 << 20))  # a line of zeros with no end
    got = blocks(file)
    assert next(got).data == b"{}\n"
    with pytest.raises(RunError, match=f"byte 3: a line over {MAX_LINE_BYTES} bytes"):
        next(got)


def test_frames_are_written_within_the_limit_and_read_back(tmp_path: Path) -> None:
    lines = [b"x" * 9 + b"\n"] * 7
    file = tmp_path / COMPRESSED
    file.write_bytes(FrameWriter(True, max_frame=20).encode(lines))
    assert [len(b.data) for b in blocks(file)] == [20, 20, 20, 10]
    file.write_bytes(FrameWriter(True, max_frame=70).encode(lines))
    assert [len(b.data) for b in blocks(file)] == [70]
    file.write_bytes(FrameWriter(True, max_frame=69).encode(lines))
    assert [len(b.data) for b in blocks(file)] == [60, 10]
    assert FrameWriter(False, max_frame=5).encode(lines) == b"".join(lines)


def test_a_frame_of_exactly_the_limit_reads_and_one_byte_more_does_not(tmp_path: Path) -> None:
    from sandbox.store import trajectory_file

    file = tmp_path / COMPRESSED
    cctx = zstandard.ZstdCompressor(write_content_size=False)
    file.write_bytes(cctx.compress(b"a" * 99 + b"\n"))
    decompress = trajectory_file._decompress  # the limit is a parameter: a small one here
    dctx = zstandard.ZstdDecompressor()
    frame = file.read_bytes()
    assert decompress(dctx, frame, file, 0, limit=100) == b"a" * 99 + b"\n"
    with pytest.raises(RunError, match="byte 0: a zstd frame that inflates past 99 bytes"):
        decompress(dctx, frame, file, 0, limit=99)
    declared = zstandard.ZstdCompressor().compress(b"a" * 99 + b"\n")
    with pytest.raises(RunError, match="byte 7: a zstd frame that inflates past 99 bytes"):
        decompress(dctx, declared, file, 7, limit=99)
    with pytest.raises(RunError, match="byte 0: a zstd frame that does not decompress"):
        decompress(dctx, frame[:-3] + b"\0\0\0", file, 0, limit=100)


def test_input_files_are_regular_bounded_json_within_depth(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    good.write_text('{"a": [1, 2]}')
    assert read_json(good) == {"a": [1, 2]}
    assert read_input(good, limit=13) == b'{"a": [1, 2]}'
    with pytest.raises(InputFileError, match="over 12 bytes"):
        read_input(good, limit=12)
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    with pytest.raises(InputFileError, match=r"fifo.json: not a regular file"):
        read_json(fifo)
    with pytest.raises(InputFileError, match="No such file"):
        read_json(tmp_path / "absent.json")
    deep = tmp_path / "deep.json"
    deep.write_text("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1))
    with pytest.raises(InputFileError, match=f"nested deeper than {MAX_JSON_DEPTH} levels"):
        read_json(deep)
    deep.write_text("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH)
    assert json_depth(read_json(deep)) == MAX_JSON_DEPTH
    deep.write_text("[" * 5000 + "]" * 5000)
    with pytest.raises(InputFileError, match="nested deeper"):
        read_json(deep)
    latin = tmp_path / "latin.json"
    latin.write_bytes(b'"\xe9"')
    with pytest.raises(InputFileError, match=r"not UTF-8 text \(byte 1\)"):
        read_json(latin)
    broken = tmp_path / "broken.json"
    broken.write_text("{\n  1")
    with pytest.raises(InputFileError, match=r"not JSON \(.* at line 2 column 3\)"):
        read_json(broken)


def test_json_lines_name_their_line(tmp_path: Path) -> None:
    file = tmp_path / "x.jsonl"
    file.write_text('{"a": 1}\n\n[2]\n')
    assert list(json_lines(file)) == [(1, {"a": 1}), (3, [2])]
    file.write_text('{"a": 1}\n{\n')
    with pytest.raises(InputFileError, match=r"x.jsonl: line 2: not JSON"):
        list(json_lines(file))
    file.write_text('{"a": 1}\n' + "1" * 30 + "\n")
    with pytest.raises(InputFileError, match="line 2 is over 20 bytes"):
        list(json_lines(file, line_limit=20))


def test_json_text_reads_json_and_names_what_nests_too_deep_as_not_json() -> None:
    import json

    assert json_text('{"a": [1]}') == {"a": [1]}
    assert json_text(b"[1]") == [1]
    for deep in ("[" * 300 + "]" * 300, "[" * 5000 + "]" * 5000):
        with pytest.raises(json.JSONDecodeError, match="nested deeper than 256 levels"):
            json_text(deep)
    assert json_depth(1) == 0 and json_depth({"a": [{}]}) == 3 and json_depth([[], [[]]]) == 3


def test_read_upto_reads_at_most_one_byte_past_the_limit(tmp_path: Path) -> None:
    file = tmp_path / "f"
    file.write_bytes(b"x" * (3 << 20))
    with file.open("rb") as fh:
        assert len(read_upto(fh, 10)) == 11
    with file.open("rb") as fh:
        assert len(read_upto(fh, (3 << 20) + 5)) == 3 << 20
    with file.open("rb") as fh:
        assert len(read_upto(fh, (1 << 20) + 1)) == (1 << 20) + 2
