"""Hardening round three, issue 39 item 3: a compressed run's frames are bounded as lines are.

A zstd frame's decompressed size is bounded like a plain line (64 MiB): a frame of a few KB that
inflates to hundreds of MB is refused in one line by every reader (eval, replay, export, resume,
the viewer's export) and costs no more memory than the limit; the writer splits a group larger
than the limit into several frames, all of which read back.
"""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path

import pytest
import zstandard

from sandbox.errors import RunError
from sandbox.store.trajectory_file import (
    COMPRESSED,
    MAX_FRAME_BYTES,
    FrameWriter,
    blocks,
    iter_lines,
)
from tests.hostile.conftest import MINI
from tests.hostile.test_one_line_errors import cli
from tests.hostile.test_run_records import one_error_line

INFLATED = 600 * 2**20


@pytest.fixture(scope="module")
def bomb() -> bytes:
    """A 19 KB zstd frame that inflates to 600 MB (its size declared in its header, or not)."""
    return zstandard.ZstdCompressor(level=19, write_content_size=False).compress(b"a" * INFLATED)


@pytest.fixture(scope="module")
def compressed_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("runs")
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--out", str(out)]
    from sandbox.cli import main

    assert main([*argv, "--run-id", "z", "--compress", "--no-plots"]) == 0
    return out / "z"


def test_39_3_a_frame_that_inflates_past_the_limit_is_refused_within_it(
    bomb: bytes, tmp_path: Path
) -> None:
    """On main the reader inflated the whole 600 MB frame (680 MB resident for `eval`)."""
    file = tmp_path / COMPRESSED
    file.write_bytes(bomb)
    assert len(bomb) < 64 * 1024
    tracemalloc.start()
    try:
        with pytest.raises(RunError, match=r"byte 0: a zstd frame that inflates past 67108864"):
            list(blocks(file))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < MAX_FRAME_BYTES * 2.5


def test_39_3_a_frame_that_declares_a_size_past_the_limit_is_refused_unread(
    tmp_path: Path,
) -> None:
    frame = zstandard.ZstdCompressor(level=19).compress(b"a" * (MAX_FRAME_BYTES + 1))
    file = tmp_path / COMPRESSED
    file.write_bytes(frame)
    tracemalloc.start()
    try:
        with pytest.raises(RunError, match="inflates past"):
            list(iter_lines(file))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 16 * 2**20  # refused from its header: nothing inflated


@pytest.mark.parametrize(
    "command",
    [
        ["eval", "{run}"],
        ["replay", "{run}"],
        ["export", "toolbench", "{run}", "{out}"],
        ["run", "--resume", "{run}"],
        ["view", "--export", "{out}", "{run}"],
    ],
)
def test_39_3_every_reader_refuses_a_bomb_in_a_run_in_one_line(
    command: list[str],
    bomb: bytes,
    compressed_run: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    run = tmp_path / "z"
    shutil.copytree(compressed_run, run)
    with (run / COMPRESSED).open("ab") as fh:
        fh.write(bomb)
    argv = [w.format(run=run, out=tmp_path / "out") for w in command]
    code, err = cli(argv, capsys)
    assert code == 1 and "a zstd frame that inflates past" in one_error_line(err), err


def test_39_3_a_group_larger_than_a_frame_is_written_as_several_frames_that_read_back(
    tmp_path: Path,
) -> None:
    lines = [(f'{{"n": {i}, "pad": "' + "x" * 40 + '"}\n').encode() for i in range(10)]
    writer = FrameWriter(True, max_frame=2 * len(lines[0]))
    file = tmp_path / COMPRESSED
    file.write_bytes(writer.encode(lines))
    found = list(blocks(file))
    assert len(found) == 5 and all(len(b.data) <= 2 * len(lines[0]) for b in found)
    assert list(iter_lines(file)) == lines
    single = FrameWriter(True, max_frame=10)  # a line longer than a frame: a frame of its own
    file.write_bytes(single.encode(lines[:2]))
    assert [b.data for b in blocks(file)] == lines[:2]
