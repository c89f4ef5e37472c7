"""The readers of a trajectories file read every line whole or refuse it naming file and line:
too long, not a trajectory, an episode the manifest does not list, a second line hiding a
finished episode. Only a torn last line (a crash mid-write) and blank lines are passed over."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_episodes import episode

from agents.trajectory import Trajectory
from sandbox.errors import RunError
from sandbox.store import Manifest, RunStore, SuiteInfo, read_trajectories
from sandbox.store.config import RunConfig
from sandbox.store.run_store import (
    iter_latest,
    iter_trajectories,
    latest_lines,
    parse_trajectory_line,
)
from sandbox.store.trajectory_file import FrameWriter


def _traj(task: str, trial: int = 0, *, infra: bool = False, answer: str = "ok") -> Trajectory:
    return episode(task, trial, error="infra" if infra else None, answer=answer)


def _run(tmp_path: Path, lines: list[str], episodes: list[tuple[str, int]]) -> Path:
    manifest = Manifest(
        run_id="r", config=RunConfig(), suite=SuiteInfo(name="s"), episodes=episodes
    )
    store = RunStore.create(tmp_path / "runs", manifest)
    store.release()
    (store.path / "trajectories.jsonl").write_text("".join(lines))
    return store.path


def test_the_latest_line_of_each_episode_is_read_in_the_order_of_those_lines(
    tmp_path: Path,
) -> None:
    """An episode that ended on an infrastructure error and ran again is read from its later
    line, in that line's place; blank lines are passed over; an identical repeat is one
    episode."""
    a_infra, b, a, c = _traj("a", infra=True), _traj("b"), _traj("a", answer="again"), _traj("c")
    lines = [a_infra.to_json_line(), "\n", b.to_json_line(), a.to_json_line()]
    lines += ["   \n", c.to_json_line(), b.to_json_line()]
    run = _run(tmp_path, lines, [("a", 0), ("b", 0), ("c", 0)])
    assert read_trajectories(run) == [a, c, b]
    file = run / "trajectories.jsonl"
    assert latest_lines(file) == {("a", 0): 4, ("c", 0): 6, ("b", 0): 7}
    assert [n for n, _ in iter_trajectories(file)] == [1, 3, 4, 6, 7]
    assert list(iter_latest(file)) == [a, c, b]


def test_a_second_line_of_a_finished_episode_is_refused_naming_both_lines(tmp_path: Path) -> None:
    first, second = _traj("a", answer="one"), _traj("a", answer="two")
    run = _run(
        tmp_path,
        [_traj("b").to_json_line(), first.to_json_line(), second.to_json_line()],
        [("a", 0), ("b", 0)],
    )
    with pytest.raises(RunError) as caught:
        read_trajectories(run)
    assert str(caught.value) == (
        f"{run / 'trajectories.jsonl'}:3: episode 'a' trial 0 is recorded already, finished, at "
        "line 2; an episode has one line unless it ran again after an infrastructure error"
    )


def test_a_line_of_an_episode_the_manifest_does_not_list_is_refused(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        [_traj("a").to_json_line(), _traj("a", trial=1).to_json_line()],
        [("a", 0), ("b", 0)],
    )
    with pytest.raises(RunError) as caught:
        read_trajectories(run)
    assert str(caught.value) == (
        f"{run / 'trajectories.jsonl'}:2: episode 'a' trial 1 is not one of the 2 its manifest "
        "lists"
    )
    # the same file read on its own (no manifest beside it to list episodes) reads both
    loose = tmp_path / "loose.jsonl"
    loose.write_bytes((run / "trajectories.jsonl").read_bytes())
    assert [(t.scenario_id, t.trial) for t in read_trajectories(loose)] == [("a", 0), ("a", 1)]


def test_a_line_over_the_limit_is_refused_and_a_torn_tail_is_not(tmp_path: Path) -> None:
    """A whole line longer than ``max_line`` is an error naming its size and the limit, even
    when it is the last and has no newline; a short unfinished last line is a crash's torn
    write and is ignored; a line exactly at the limit is read."""
    first = _traj("a")
    line = first.to_json_line()
    size = len(line.encode()) - 1  # without its newline
    run = _run(tmp_path, [line, _traj("b").to_json_line()[:40]], [("a", 0), ("b", 0)])
    assert [t.scenario_id for t in read_trajectories(run, max_line=size)] == ["a"]
    with pytest.raises(RunError) as caught:
        read_trajectories(run, max_line=size - 1)
    assert str(caught.value) == (
        f"{run / 'trajectories.jsonl'}:1: a line of {size} bytes, over the {size - 1} bytes a "
        "trajectory may take (MAX_TRAJECTORY_LINE)"
    )
    file = run / "trajectories.jsonl"
    with pytest.raises(RunError, match=rf"trajectories.jsonl:1: a line of {size} bytes, over"):
        list(iter_trajectories(file, max_line=size - 1))  # each line read on its own too
    file.write_text(line + "x" * (size + 5))  # a second line too long, never finished
    with pytest.raises(RunError) as caught:
        list(iter_trajectories(file, max_line=size))
    assert str(caught.value).startswith(f"{file}:2: a line of {size + 2} bytes, over the {size} ")
    file.write_text(line + "x" * (size + 1))  # unfinished, one byte past the limit: torn
    assert list(iter_trajectories(file, max_line=size)) == [(1, first)]


def test_a_line_that_is_no_trajectory_is_refused_naming_the_problem(tmp_path: Path) -> None:
    good = _traj("a").to_json_line()
    run = _run(tmp_path, [good, '{"scenario_id": "b", "trial": 0}\n'], [("a", 0), ("b", 0)])
    with pytest.raises(RunError) as caught:
        read_trajectories(run)
    assert str(caught.value) == (
        f"{run / 'trajectories.jsonl'}:2: not a valid trajectory: agent: Field required"
    )
    (run / "trajectories.jsonl").write_text(good + "[1, 2]\n")
    with pytest.raises(RunError, match=r"trajectories.jsonl:2: not a valid trajectory: "):
        read_trajectories(run)
    with pytest.raises(RunError) as caught:
        parse_trajectory_line(b'{"scenario_id": "\\ud800"}', "f:9")
    assert str(caught.value).startswith("f:9: not a valid trajectory: ")
    with pytest.raises(RunError) as caught:
        parse_trajectory_line(b"{oops", "f:3")
    assert str(caught.value) == (
        "f:3: not a valid trajectory: Invalid JSON: key must be a string at column 2"
    )


def test_the_episode_of_a_line_is_found_past_its_first_kilobyte(tmp_path: Path) -> None:
    """A writer may put other keys first: the id is then read from the whole line."""
    record = _traj("far").model_dump(mode="json", by_alias=True)
    padded = {"run_id": "x" * 2000, **{k: v for k, v in record.items() if k != "run_id"}}

    line = json.dumps(padded) + "\n"
    assert line.index('"scenario_id"') > 1024
    run = _run(tmp_path, [line], [("far", 0)])
    assert [t.scenario_id for t in read_trajectories(run)] == ["far"]


def test_what_is_no_trajectories_file_is_named(tmp_path: Path) -> None:
    run = _run(tmp_path, [], [])
    (run / "trajectories.jsonl").unlink()
    assert read_trajectories(run) == []  # a run that stored nothing yet
    with pytest.raises(RunError) as caught:
        read_trajectories(tmp_path)
    assert str(caught.value) == f"{tmp_path}: no trajectories.jsonl here (is it a run folder?)"
    (run / "trajectories.jsonl").mkdir()
    with pytest.raises(RunError) as caught:
        read_trajectories(run)
    assert str(caught.value) == f"{run / 'trajectories.jsonl'}: not a regular file"
    with pytest.raises(RunError, match="not a regular file"):
        list(iter_trajectories(run / "trajectories.jsonl"))
    assert list(iter_trajectories(tmp_path / "absent.jsonl")) == []


def test_a_finished_episode_repeated_after_another_episodes_rerun_is_still_refused(
    tmp_path: Path,
) -> None:
    """Episode a ran again after an infrastructure error (allowed); episode b has two
    finished lines (refused): the allowed re-run before it does not hide b's."""
    lines = [
        _traj("a", infra=True).to_json_line(),
        _traj("b", answer="one").to_json_line(),
        _traj("a").to_json_line(),
        _traj("b", answer="two").to_json_line(),
    ]
    run = _run(tmp_path, lines, [("a", 0), ("b", 0)])
    with pytest.raises(RunError) as caught:
        read_trajectories(run)
    assert str(caught.value).startswith(
        f"{run / 'trajectories.jsonl'}:4: episode 'b' trial 0 is recorded already, finished, at "
        "line 2;"
    )


def test_streaming_the_latest_lines_refuses_the_first_bad_line_in_file_order(
    tmp_path: Path,
) -> None:
    """A line over the limit, then a line of an episode not listed: the first is named."""
    line = _traj("a").to_json_line()
    size = len(line.encode()) - 1
    file = tmp_path / "t.jsonl"
    file.write_text(line + _traj("b").to_json_line())
    with pytest.raises(RunError) as caught:
        list(iter_latest(file, listed={("a", 0)}, max_line=size - 1))
    assert str(caught.value).startswith(f"{file}:1: a line of {size} bytes, over the {size - 1} ")


def test_a_compressed_line_exactly_at_the_limit_is_read_and_one_over_is_not(
    tmp_path: Path,
) -> None:
    """The limit counts a line's bytes without its newline, in a compressed file too."""
    first = _traj("a")
    line = first.to_json_line().encode()
    size = len(line) - 1
    file = tmp_path / "t.jsonl.zst"
    file.write_bytes(FrameWriter(True).encode([line]))
    assert list(iter_latest(file, max_line=size)) == [first]
    assert list(iter_trajectories(file, max_line=size)) == [(1, first)]
    with pytest.raises(RunError, match=rf":1: a line of {size} bytes, over the {size - 1} "):
        list(iter_latest(file, max_line=size - 1))


def test_a_line_far_over_the_limit_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    """The reader stops one newline's room past the limit: the error gives what it read."""
    file = tmp_path / "t.jsonl"
    file.write_bytes(b"x" * 100_000 + b"\n")
    with pytest.raises(RunError) as caught:
        latest_lines(file, max_line=1000)
    assert str(caught.value).startswith(f"{file}:1: a line of 1002 bytes, over the 1000 bytes ")


def test_a_line_json_cannot_read_after_a_lone_surrogate_is_named() -> None:
    """A line escaping an unpaired surrogate is read by json instead of pydantic: if json
    cannot read it either, its error is given."""
    with pytest.raises(RunError) as caught:
        parse_trajectory_line(b'{"scenario_id": "\\udc00", oops}', "f:4")
    assert str(caught.value).startswith("f:4: not a valid trajectory: Expecting ")
