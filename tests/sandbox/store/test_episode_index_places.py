"""``EpisodeIndex`` says where each episode's latest line is (byte offset, length, line number),
digests it as a table row shows it, and reads one episode back from its line (or its frame, in
a compressed run) as it grows, shrinks or starts compressed."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_episodes import episode

from agents.trajectory import EpisodeUsage, Node, Trajectory
from sandbox.errors import RunError
from sandbox.store import EpisodeIndex
from sandbox.store import episode_index as episode_index_module
from sandbox.store.trajectory_file import COMPRESSED, PLAIN, Block, FrameWriter

USAGE = EpisodeUsage(
    model_calls=3,
    tool_calls=2,
    prompt_tokens=11,
    completion_tokens=7,
    cost=0.5,
    wall_seconds=1.5,
    model_retries=1,
)
"""Every usage figure set, each to its own value."""


def _traj(task: str, trial: int = 0, *, steps: int = 0, infra: bool = False) -> Trajectory:
    return episode(
        task,
        trial,
        error="infra" if infra else None,
        answer=None if infra else f"answer {task}",
        end_reason="model_error" if infra else "finish",
        nodes=[Node(id=i, kind="action") for i in range(steps)],
        usage=USAGE,
    )


def _line(t: Trajectory) -> bytes:
    return t.to_json_line().encode("utf-8")


def test_each_digest_holds_the_row_and_where_its_line_is(tmp_path: Path) -> None:
    """Offsets and lengths are those of the line's bytes (newline excluded), line numbers count
    blank lines, the latest line of an episode wins."""
    a, b, a2 = _line(_traj("a", steps=2, infra=True)), _line(_traj("b", 4)), _line(_traj("a"))
    (tmp_path / PLAIN).write_bytes(a + b"\n" + b + a2)
    index = EpisodeIndex.of(tmp_path)
    assert index.keys == [("b", 4), ("a", 0)]
    assert ("a", 0) in index and ("c", 0) not in index and len(index) == 2
    db, da = index.digests
    assert (db.offset, db.length, db.line) == (len(a) + 1, len(b) - 1, 3)
    assert (da.offset, da.length, da.line) == (len(a) + 1 + len(b), len(a2) - 1, 4)
    assert db == index.get(("b", 4))
    assert (db.scenario_id, db.trial, db.status, db.end_reason) == ("b", 4, "answered", "finish")
    assert (db.final_answer, db.steps, db.infra_error) == ("answer b", 0, False)
    assert db.usage == USAGE
    first = EpisodeIndex.of(tmp_path / PLAIN)  # a file given directly
    assert first.get(("a", 0)) == da
    (tmp_path / PLAIN).write_bytes(a)
    (infra,) = first.refresh().digests  # the file shrank: indexed again from its start
    assert (infra.status, infra.end_reason, infra.infra_error, infra.steps) == (
        "error",
        "model_error",
        True,
        2,
    )
    assert (infra.offset, infra.line, infra.final_answer) == (0, 1, None)


def test_a_sparse_line_is_digested_with_the_defaults_of_a_trajectory(tmp_path: Path) -> None:
    (tmp_path / PLAIN).write_text(
        '{"scenario_id": "s", "trial": null, "status": "error", '
        '"errors": ["x", {"kind": "infra"}]}\n'
        '{"scenario_id": "t", "trial": 1, "status": null}\n'
    )
    d, bare = EpisodeIndex.of(tmp_path).digests
    assert (d.trial, d.status, d.end_reason, d.final_answer, d.steps) == (0, "error", "", None, 0)
    assert d.usage == EpisodeUsage() and d.infra_error
    assert (bare.status, bare.infra_error) == ("", False)


def test_a_compressed_run_is_indexed_by_frame_and_read_back_one_episode_at_a_time(
    tmp_path: Path,
) -> None:
    """A run that had not started is indexed from the file it starts with, compressed here."""
    index = EpisodeIndex.of(tmp_path)
    assert len(index) == 0
    writer = FrameWriter(True)
    ta, tb, tc = _traj("a", steps=1), _traj("b", steps=2), _traj("c", steps=3)
    first = writer.encode([_line(ta), b"\n", _line(tb)])
    (tmp_path / COMPRESSED).write_bytes(first)
    assert index.refresh().keys == [("a", 0), ("b", 0)]
    with (tmp_path / COMPRESSED).open("ab") as fh:
        fh.write(writer.encode([_line(tc)]))
    assert index.refresh().keys == [("a", 0), ("b", 0), ("c", 0)]
    a, b, c = index.digests
    assert (a.offset, b.offset, c.offset) == (0, 0, len(first))
    assert (a.line, b.line, c.line) == (1, 3, 4)
    assert (a.length, b.length) == (len(_line(ta)) - 1, len(_line(tb)) - 1)
    assert [a.steps, b.steps, c.steps] == [1, 2, 3]
    assert index.trajectory(("b", 0)) == tb
    assert index.trajectory(("c", 0)) == tc
    assert index.trajectory(("a", 0)) == ta  # back in the first frame


def test_a_line_whose_episode_is_found_but_is_no_json_is_named_when_read(tmp_path: Path) -> None:
    (tmp_path / PLAIN).write_text('{"scenario_id": "a", "trial": 0, oops\n')
    index = EpisodeIndex.of(tmp_path)  # the episode is read from the first bytes
    with pytest.raises(RunError, match=r"trajectories.jsonl:1: not a trajectory line \("):
        index.get(("a", 0))
    with pytest.raises(RunError, match=r"trajectories.jsonl:1: not a trajectory line \("):
        _ = index.digests
    with pytest.raises(RunError, match=r"trajectories.jsonl:1: not a valid trajectory"):
        index.trajectory(("a", 0))


def test_a_replaced_file_is_indexed_again_even_when_it_grew(tmp_path: Path) -> None:
    """A resume compacts the file and writes it anew (another inode): whatever its size, the
    index is rebuilt from the new file, never continued at the old one's offset."""
    file = tmp_path / PLAIN
    file.write_bytes(_line(_traj("a")))
    index = EpisodeIndex.of(tmp_path)
    assert index.keys == [("a", 0)]
    new = tmp_path / "new.jsonl"
    new.write_bytes(b"".join(_line(_traj(t)) for t in "xyz"))
    os.replace(new, file)
    assert index.refresh().keys == [("x", 0), ("y", 0), ("z", 0)]
    z = index.trajectory(("z", 0))
    assert z is not None and (z.scenario_id, z.final_answer) == ("z", "answer z")


def test_a_refresh_reads_only_the_bytes_appended_since_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = tmp_path / PLAIN
    first = _line(_traj("a"))
    file.write_bytes(first)
    reads: list[int] = []
    real = episode_index_module.blocks

    def counted(path: Path, start: int = 0) -> Iterator[Block]:
        reads.append(start)
        return real(path, start)

    monkeypatch.setattr(episode_index_module, "blocks", counted)
    index = EpisodeIndex.of(tmp_path)
    digest = index.get(("a", 0))
    index.refresh()  # nothing appended: nothing read, the digest made is kept
    assert reads == [0] and index.get(("a", 0)) is digest
    with file.open("ab") as fh:
        fh.write(_line(_traj("b")))
    assert index.refresh().keys == [("a", 0), ("b", 0)]
    assert reads == [0, len(first)] and index.get(("a", 0)) is digest
