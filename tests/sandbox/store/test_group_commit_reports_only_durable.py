"""Group commit reports an episode finished only once its line is on disk: of a group cut short
by a full disk, exactly the lines stored are reported and the run stops on the error; lines
queued when the appender closes are still written."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest
from store_episodes import episode_line, new_run

from sandbox.errors import RunError
from sandbox.store import RunStore, read_trajectories
from sandbox.store.group_commit import GroupCommit
from sandbox.store.run_store import StoreFull


async def _drained(commit: GroupCommit) -> None:
    """``drain``, bounded: an appender that never reports its lines fails the test instead of
    hanging it (the bound is far above the milliseconds a drain takes)."""
    await asyncio.wait_for(commit.drain(), timeout=30)


class _RoomForTwo(RunStore):
    """A disk with room for two lines per group; the first group waits for ``gate``."""

    gate: threading.Event
    arrived: threading.Event

    def append_lines(self, lines: list[bytes]) -> None:
        self.arrived.set()
        assert self.gate.wait(timeout=10)
        super().append_lines(lines[:2])
        if len(lines) > 2:
            raise StoreFull("cannot write trajectories.jsonl: disk full", stored=2)


async def test_a_group_cut_short_reports_the_lines_stored_and_stops_the_run(
    tmp_path: Path,
) -> None:
    """While a's group is written, b, c and d queue into the next group; the disk takes two of
    them: b and c are reported, d is not, and the run's next step raises the error."""
    store = new_run(tmp_path, *"abcdef", run_id="g")
    full = _RoomForTwo(store.path, store.manifest)
    full.gate, full.arrived = threading.Event(), threading.Event()
    commit = GroupCommit(full)
    reported: list[str] = []
    commit.submit(episode_line("a"), lambda: reported.append("a"))
    assert await asyncio.to_thread(full.arrived.wait, 10)
    for task in "bcd":
        commit.submit(episode_line(task), lambda task=task: reported.append(task))  # type: ignore[misc]
    commit.check()  # nothing failed yet
    full.gate.set()
    with pytest.raises(RunError, match="disk full"):
        await _drained(commit)
    with pytest.raises(RunError, match="disk full"):
        commit.check()
    with pytest.raises(RunError, match="disk full"):
        commit.submit(episode_line("e"), lambda: reported.append("e"))
    commit.close()
    full.close()
    store.release()
    assert reported == ["a", "b", "c"]
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "b", "c"]
    assert commit.groups == 2  # a's group, then the part of b, c, d that was stored


async def test_lines_queued_when_the_appender_closes_are_written(tmp_path: Path) -> None:
    store = new_run(tmp_path, *"abcdef", run_id="g")
    commit = GroupCommit(store)
    reported: list[str] = []
    for task in "abc":
        commit.submit(episode_line(task), lambda task=task: reported.append(task))  # type: ignore[misc]
    await asyncio.to_thread(commit.close)  # blocking: written before it returns
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "b", "c"]
    await asyncio.sleep(0.05)
    await asyncio.sleep(0)
    assert reported == ["a", "b", "c"]  # reported in the loop, in order
    await _drained(commit)  # nothing left in flight
    store.release()


class _Gated(RunStore):
    """A store whose first append waits for ``gate``."""

    gate: threading.Event
    arrived: threading.Event

    def append_lines(self, lines: list[bytes]) -> None:
        self.arrived.set()
        assert self.gate.wait(timeout=10)
        super().append_lines(lines)


def test_an_appender_whose_loop_has_ended_still_writes_what_it_was_given(tmp_path: Path) -> None:
    """The run's loop ended while a group was being written (a run cut off): nobody waits for
    its report any more, and the writer goes on to write the next group."""
    store = new_run(tmp_path, *"abcdef", run_id="g")
    gated = _Gated(store.path, store.manifest)
    gated.gate, gated.arrived = threading.Event(), threading.Event()
    box: dict[str, GroupCommit] = {}

    async def start() -> None:
        box["commit"] = GroupCommit(gated)
        box["commit"].submit(episode_line("a"), lambda: None)
        assert await asyncio.to_thread(gated.arrived.wait, 10)  # a is being written
        box["commit"].submit(episode_line("b"), lambda: None)  # the next group

    asyncio.run(start())  # the loop is closed when the groups' reports would run
    gated.gate.set()
    box["commit"].close()
    gated.close()
    store.release()
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "b"]


async def test_the_writer_is_a_daemon_thread_named_for_a_stack_dump(tmp_path: Path) -> None:
    """A run that dies without closing its appender is not kept alive by it, and a dump of a
    stuck run's threads names it; closing it ends the thread."""
    store = new_run(tmp_path, *"abcdef", run_id="g")
    before = set(threading.enumerate())
    commit = GroupCommit(store)
    writers = list(set(threading.enumerate()) - before)
    assert [(t.name, t.daemon, t.is_alive()) for t in writers] == [("group-commit", True, True)]
    assert commit.groups == 0
    await _drained(commit)  # nothing submitted: returns at once
    commit.close()
    assert not writers[0].is_alive()
    store.release()
