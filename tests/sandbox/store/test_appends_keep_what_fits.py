"""Appending trajectories: a group is stored whole or, when the disk is full, as many whole lines
as fit, each reported; an episode too large to keep is stored without its steps, never lost."""

from __future__ import annotations

import contextlib
import json
import os
import resource
import signal
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest
from store_episodes import episode, episode_line, new_run

from agents.trajectory import ErrorRecord, Message, Node, Status, Trajectory
from sandbox.errors import RunError
from sandbox.store import read_trajectories
from sandbox.store.run_store import TOO_LARGE, StoreFull, too_large


@contextlib.contextmanager
def _file_size_limit(limit: int) -> Iterator[None]:
    """Files of this process may not grow past ``limit`` bytes (as on a full disk): a write
    across it is cut short, the next one fails."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, handler)


def test_a_group_on_a_full_disk_keeps_the_whole_lines_that_fit_and_says_how_many(
    tmp_path: Path,
) -> None:
    """Three lines where two fit: the group's single write fails and is cut back, the lines
    are then written one by one, two are stored whole, the third is not begun, and the error
    says so; once there is room the run appends after them."""
    store = new_run(tmp_path, "a", "b", "c", "d")
    lines = [episode_line("a"), episode_line("b"), episode_line("c")]
    room = len(lines[0]) + len(lines[1]) + len(lines[2]) // 2
    with _file_size_limit(room), pytest.raises(StoreFull) as caught:
        store.append_lines(lines)
    assert caught.value.stored == 2
    path = store.trajectories_path
    assert str(caught.value) == (
        f"cannot write {path}: short write ({room - len(lines[0]) - len(lines[1])}/"
        f"{len(lines[2])} bytes); the episodes stored so far are kept (--resume continues once "
        "there is room)"
    )
    assert isinstance(caught.value, RunError)
    assert path.read_bytes() == lines[0] + lines[1]
    store.append_lines([episode_line("d")])
    store.release()
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a", "b", "d"]


def test_one_line_that_does_not_fit_stores_nothing_and_leaves_the_file_as_it_was(
    tmp_path: Path,
) -> None:
    store = new_run(tmp_path, "a", "b")
    store.append_lines([episode_line("a")])
    before = store.trajectories_path.read_bytes()
    with _file_size_limit(len(before) + 10), pytest.raises(StoreFull) as caught:
        store.append_lines([episode_line("b")])
    store.release()
    assert caught.value.stored == 0
    assert store.trajectories_path.read_bytes() == before


def test_a_device_that_is_always_full_is_reported_with_the_systems_reason(tmp_path: Path) -> None:
    store = new_run(tmp_path, "a", "b")
    store.trajectories_path.symlink_to("/dev/full")
    with pytest.raises(StoreFull) as caught:
        store.append_lines([episode_line("a"), episode_line("b")])
    store.release()
    assert caught.value.stored == 0
    assert str(caught.value).startswith(
        f"cannot write {store.trajectories_path}: No space left on device; "
    )


def test_a_trajectories_file_that_cannot_be_opened_is_a_one_line_error(tmp_path: Path) -> None:
    store = new_run(tmp_path, "a")
    store.trajectories_path.mkdir()
    with pytest.raises(RunError) as caught:
        store.append(episode("a"))
    store.release()
    assert str(caught.value) == f"cannot write {store.trajectories_path}: Is a directory"


def test_an_episode_over_the_line_limit_is_stored_without_its_steps(tmp_path: Path) -> None:
    """Its outcome and usage are kept; it ends ``error`` / ``trajectory_too_large`` with a
    message giving the line's size and the limit; a line at the limit is kept whole."""
    store = new_run(tmp_path, "big", "fits")
    big = episode("big", tree={"pad": "z" * 3000})
    size = len(big.to_json_line().encode("utf-8"))
    store.max_line = size - 1
    fits = episode("fits", tree={"pad": "z" * 30})
    assert len(fits.to_json_line().encode("utf-8")) <= size - 1
    store.append(big)
    store.append(fits)
    store.release()
    kept, whole = read_trajectories(store.path)
    assert whole == fits
    assert (kept.status, kept.end_reason, kept.tree) == (Status.error, TOO_LARGE, {})
    assert kept.final_answer == "ok" and kept.usage == big.usage
    assert [(e.kind, e.message) for e in kept.errors] == [
        (
            "agent",
            f"its trajectory line was {size} bytes, over the limit of {size - 1} "
            "(MAX_TRAJECTORY_LINE): its steps are not kept",
        )
    ]
    store.max_line = size  # exactly at the limit: whole
    store.append(big)  # (a second line of a finished episode, read by nobody here)
    store.close()
    last = store.trajectories_path.read_bytes().splitlines()[-1]
    assert json.loads(last)["tree"] == {"pad": "z" * 3000}


def test_an_episode_whose_inputs_are_too_large_also_loses_its_prompt(tmp_path: Path) -> None:
    """When even the record without steps is over the limit, its prompt and functions go too
    and its answer is cut to 4096 characters; the message says so."""
    prompt = [Message(role="user", content="x" * 5000)]
    record = episode("a", answer="y" * 5000, prompt=prompt, functions=[{"name": "f" * 3000}])
    size = len(record.to_json_line().encode("utf-8"))
    kept = too_large(record, size, 6000)
    assert (kept.prompt, kept.functions, kept.final_answer) == ([], [], "y" * 4096)
    assert [e.message for e in kept.errors] == [
        f"its trajectory line was {size} bytes, over the limit of 6000 (MAX_TRAJECTORY_LINE): "
        "its steps are not kept, nor its prompt"
    ]
    none = too_large(record.model_copy(update={"final_answer": None}), size, 6000)
    assert none.final_answer is None
    stepped = record.model_copy(update={"tree": {"pad": "z" * 3000}})
    big = len(stepped.to_json_line().encode("utf-8"))
    fits = too_large(stepped, big, big - 1)  # without its steps it fits: the prompt stays
    assert fits.prompt == prompt and fits.final_answer == "y" * 5000 and fits.tree == {}


def test_an_episode_stored_without_its_steps_keeps_no_node_path_or_tree() -> None:
    nodes = [Node(id=0, kind="action"), Node(id=1, parent=0, kind="action")]
    record = episode("a", nodes=nodes, chosen_path=[0, 1], tree={"k": 1})
    size = len(record.to_json_line().encode("utf-8"))
    kept = too_large(record, size, size - 1)
    assert (kept.nodes, kept.chosen_path, kept.tree) == ([], [], {})
    assert (kept.status, kept.end_reason) == (Status.error, TOO_LARGE)


def _stripped_size(whole: Trajectory, limit: int) -> int:
    """The size of the episode's record without its steps, built here from what the record is
    documented to hold: the outcome, usage and inputs, ended error / trajectory_too_large."""
    message = (
        f"its trajectory line was {limit + 1} bytes, over the limit of {limit} "
        "(MAX_TRAJECTORY_LINE): its steps are not kept"
    )
    record = whole.model_copy(
        update={
            "status": Status.error,
            "end_reason": TOO_LARGE,
            "tree": {},
            "errors": [ErrorRecord(kind="agent", message=message)],
        }
    )
    return len(record.to_json_line().encode("utf-8"))


def test_a_record_without_steps_exactly_at_the_limit_keeps_its_prompt() -> None:
    """The prompt is dropped only when the record without steps is still over the limit."""
    prompt = [Message(role="user", content="p" * 3000)]
    record = episode("a", prompt=prompt, tree={"pad": "z" * 5000})
    limit = _stripped_size(record, 4000)  # its digits do not change the size: 4 either way
    assert 1000 <= limit <= 9999
    assert _stripped_size(record, limit) == limit
    kept = too_large(record, limit + 1, limit)
    assert kept.prompt == prompt and len(kept.to_json_line().encode("utf-8")) == limit
    below = too_large(record, limit, limit - 1)
    assert below.prompt == []


def test_of_two_lines_on_a_full_disk_the_one_that_fits_is_kept(tmp_path: Path) -> None:
    store = new_run(tmp_path, "a", "b")
    lines = [episode_line("a"), episode_line("b")]
    with _file_size_limit(len(lines[0]) + 5), pytest.raises(StoreFull) as caught:
        store.append_lines(lines)
    store.release()
    assert caught.value.stored == 1
    assert store.trajectories_path.read_bytes() == lines[0]


def test_a_new_trajectories_file_is_readable_by_all_and_executable_by_none(
    tmp_path: Path,
) -> None:
    store = new_run(tmp_path, "a")
    old = os.umask(0o022)
    try:
        store.append(episode("a"))
    finally:
        os.umask(old)
    store.release()
    assert stat.S_IMODE(store.trajectories_path.stat().st_mode) == 0o644
