"""What a resume relies on: compaction keeps one line per finished episode in the order they
finished (re-running infrastructure errors), a run cut off while scoring is completed without
running anything, the run's suite is found from where the run is, and files are replaced
atomically, never written through a link."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Literal

import pytest
from store_episodes import episode, new_run

from agents.trajectory import EpisodeUsage, ErrorRecord, Trajectory
from sandbox.errors import RunError
from sandbox.store import RunStore, read_trajectories
from sandbox.store.run_store import needs_rerun, write_atomic, write_lines_atomic, write_new
from sandbox.store.trajectory_file import blocks, iter_lines

ErrorKind = Literal["infra", "agent", "internal"]


def _traj(task: str, *, cost: float = 0.0, error: ErrorKind | None = None) -> Trajectory:
    return episode(task, error=error, usage=EpisodeUsage(cost=cost))


@pytest.mark.parametrize("compress", [False, True], ids=["plain", "compressed"])
def test_compaction_keeps_each_finished_episode_once_in_its_place_with_its_cost(
    tmp_path: Path, compress: bool
) -> None:
    """Infrastructure and harness errors are dropped (they run again), an agent's error is
    kept (it finished), an identical repeat is one line; the returned costs are those of the
    finished episodes; an appended re-run then follows them."""
    store = new_run(tmp_path, "a", "b", "c", "d", compress=compress)
    b, c, d = _traj("b", cost=0.5), _traj("c", cost=0.25, error="agent"), _traj("d", cost=2.0)
    for t in (_traj("a", cost=9.0, error="infra"), b, c, _traj("d", error="internal"), d, b):
        store.append(t)
    assert store.compact() == {("b", 0): 0.5, ("c", 0): 0.25, ("d", 0): 2.0}
    assert [line.decode() for line in iter_lines(store.trajectories_path)] == [
        b.to_json_line(),
        c.to_json_line(),
        d.to_json_line(),
    ]
    store.append(_traj("a", cost=1.0))
    store.release()
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["b", "c", "d", "a"]
    assert sorted(p.name for p in store.path.iterdir()) == sorted(
        [".lock", "manifest.json", store.trajectories_path.name]
    )  # no temporary file is left


def test_compaction_refuses_a_file_the_readers_refuse(tmp_path: Path) -> None:
    store = new_run(tmp_path, "a")
    store.append(_traj("a"))
    store.append(_traj("zz"))  # an episode the manifest does not list
    with pytest.raises(RunError, match="'zz' trial 0 is not one of the 1 its manifest lists"):
        store.compact()
    store.release()


def test_a_run_cut_off_while_scoring_is_completed_only_when_every_episode_finished(
    tmp_path: Path,
) -> None:
    store = new_run(tmp_path, "a", "b")
    store.append(_traj("a"))
    store.append(_traj("b", error="infra"))
    assert not store.complete_if_finished()  # its writer (this process) holds it
    store.release()
    opened = RunStore.open(store.path)
    assert not opened.complete_if_finished()  # b must run again
    assert RunStore.open(store.path).manifest.status == "running"
    opened.append(_traj("b"))
    opened.close()
    assert opened.complete_if_finished()
    again = RunStore.open(store.path).manifest
    assert again.status == "completed" and again.ended_at is not None
    assert again.ended_at.utcoffset() == timedelta(0)  # a UTC time, as every other
    assert not RunStore.open(store.path).complete_if_finished()  # already completed


def test_a_failed_run_is_never_marked_completed(tmp_path: Path) -> None:
    store = new_run(tmp_path, "a")
    store.append(_traj("a"))
    store.manifest.status = "failed"
    store.write_manifest()
    store.release()
    assert not RunStore.open(store.path).complete_if_finished()
    assert RunStore.open(store.path).manifest.status == "failed"


def test_the_suite_is_found_beside_the_run_or_where_it_was_recorded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A relative suite path is looked for from the run folder up and from the working
    directory; an absolute one where it is; a task file is a suite too; the error names
    every path tried."""
    (tmp_path / "suites" / "mine").mkdir(parents=True)
    (tmp_path / "suites" / "mine" / "suite.yaml").write_text("name: mine\n")
    store = new_run(tmp_path, "a", suite="suites/mine")
    store.release()
    monkeypatch.chdir("/")
    assert store.suite_path() == tmp_path / "suites" / "mine"  # two folders up from the run
    absolute = str(tmp_path / "suites" / "mine")
    assert store.suite_path(absolute) == Path(absolute)
    (tmp_path / "tasks.jsonl").write_text("{}\n")
    assert store.suite_path("tasks.jsonl") == tmp_path / "tasks.jsonl"
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "other").mkdir(parents=True)
    (elsewhere / "other" / "suite.yaml").write_text("name: other\n")
    monkeypatch.chdir(elsewhere)
    assert store.suite_path("other") == Path.cwd() / "other"  # from the working directory
    with pytest.raises(RunError) as caught:
        store.suite_path("gone")
    assert str(caught.value) == (
        "the suite of run r is not at gone; run the command from the folder the run was made "
        "in, or put the suite back"
    )
    store.manifest.suite.path = "gone"
    store.manifest.config = store.manifest.config.with_values({"suite": "suites/mine"})
    assert store.suite_path() == tmp_path / "suites" / "mine"  # the config's path, second
    store.manifest.config = store.manifest.config.with_values({"suite": "lost"})
    with pytest.raises(RunError, match="is not at gone or lost; "):
        store.suite_path()
    store.manifest.suite.path = ""
    with pytest.raises(RunError, match="is not at lost; "):
        store.suite_path()


def test_a_file_written_new_replaces_a_link_instead_of_writing_through_it(tmp_path: Path) -> None:
    target = tmp_path / "precious"
    target.write_text("keep me")
    link = tmp_path / "out.json"
    link.symlink_to(target)
    write_new(link, "é new")
    assert not link.is_symlink() and link.read_bytes() == "é new".encode()
    assert target.read_text() == "keep me"
    write_new(tmp_path / "raw.bin", b"\x00\x01")
    assert (tmp_path / "raw.bin").read_bytes() == b"\x00\x01"


def test_an_atomic_write_replaces_the_file_whole_or_says_why_not(tmp_path: Path) -> None:
    path = tmp_path / "scores.json"
    path.write_text("old")
    write_atomic(path, ["a", "é", "c"])
    assert path.read_bytes() == "aéc".encode()
    write_atomic(path, "whole")
    assert path.read_text() == "whole"
    with pytest.raises(RunError) as caught:
        write_atomic(tmp_path / "gone" / "x.json", "text")
    gone = tmp_path / "gone" / "x.json"
    assert str(caught.value) == f"cannot write {gone}: No such file or directory"

    def broken() -> Iterator[str]:
        yield "half"
        raise KeyError("the writer broke")

    with pytest.raises(KeyError):
        write_atomic(path, broken())
    assert path.read_text() == "whole"
    assert os.listdir(tmp_path) == ["scores.json"]  # the temporary file is gone either way


@pytest.mark.parametrize("name", ["t.jsonl", "t.jsonl.zst"])
def test_lines_given_out_of_order_are_written_in_their_places(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"")
    texts = [f"line {i} " + "x" * 200_000 + "\n" for i in range(4)]
    write_lines_atomic(path, iter([(2, texts[2]), (0, texts[0]), (3, texts[3]), (1, texts[1])]), 4)
    assert [x.decode() for x in iter_lines(path)] == texts
    with pytest.raises(RunError) as caught:
        write_lines_atomic(path, iter([(0, "a\n"), (2, "c\n")]), 3)
    assert str(caught.value) == f"{path}: changed while it was rewritten"
    with pytest.raises(RunError, match="changed while it was rewritten"):
        write_lines_atomic(path, iter([(0, "a\n"), (1, "b\n")]), 1)
    assert [x.decode() for x in iter_lines(path)] == texts  # a refused rewrite changes nothing


def test_only_an_error_of_the_infrastructure_or_the_harness_runs_an_episode_again() -> None:
    """An agent's error finished the episode; an answered episode whose model call was retried
    after an infrastructure error finished too."""
    assert needs_rerun(_traj("a", error="infra")) and needs_rerun(_traj("a", error="internal"))
    assert not needs_rerun(_traj("a", error="agent"))
    retried = _traj("a").model_copy(update={"errors": [ErrorRecord(kind="infra", message="x")]})
    assert not needs_rerun(retried)


def test_a_store_used_as_a_context_closes_its_file_and_reads_what_it_wrote(
    tmp_path: Path,
) -> None:
    store = new_run(tmp_path, "a", "b")
    store.release()
    with RunStore.open(store.path) as opened:
        opened.append(_traj("a"))
        opened.append(_traj("b"))
        assert opened._fd is not None
        assert [t.scenario_id for t in opened.trajectories()] == ["a", "b"]
        assert opened.listed() == {("a", 0), ("b", 0)}
    assert opened._fd is None
    opened.close()  # closing twice is harmless
    assert opened.trajectories_path == store.path / "trajectories.jsonl"


def test_a_compressed_rewrite_holds_frames_of_many_lines_not_one_per_line(tmp_path: Path) -> None:
    """Lines are gathered into frames of about 256 KiB (four lines of 200 KB: two frames of
    two, given in order; one frame when the first comes last), never a frame per line."""
    path = tmp_path / "t.jsonl.zst"
    texts = [f"line {i} " + "x" * 200_000 + "\n" for i in range(4)]
    write_lines_atomic(path, iter(enumerate(texts)), 4)
    assert [b.data.count(b"\n") for b in blocks(path)] == [2, 2]
    write_lines_atomic(path, iter([(2, texts[2]), (0, texts[0]), (3, texts[3]), (1, texts[1])]), 4)
    assert [b.data.count(b"\n") for b in blocks(path)] == [4]


def test_compaction_refuses_the_first_bad_line_in_file_order(tmp_path: Path) -> None:
    """With the store's line limit lowered, a line over it is refused as the readers refuse it,
    before a later line of an episode the manifest does not list."""
    store = new_run(tmp_path, "a", "b" * 20)
    store.append(_traj("a"))
    store.append(_traj("b" * 20))
    store.append(_traj("zz"))
    store.close()
    lines = store.trajectories_path.read_bytes().splitlines()
    store.max_line = len(lines[1]) - 1
    with pytest.raises(RunError) as caught:
        store.compact()
    store.release()
    assert str(caught.value) == (
        f"{store.trajectories_path}:2: a line of {len(lines[1])} bytes, over the "
        f"{len(lines[1]) - 1} bytes a trajectory may take (MAX_TRAJECTORY_LINE)"
    )
