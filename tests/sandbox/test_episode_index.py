"""``EpisodeIndex``: one digest per episode from the trajectories file, kept current as lines are
appended, rebuilt when the file is rewritten, and one episode read back from its line alone."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agents.trajectory import Component, EpisodeUsage, ErrorRecord, Node, Status, Trajectory
from sandbox.errors import RunError
from sandbox.store import TRAJECTORIES, EpisodeIndex, read_trajectories


def traj(
    task: str,
    trial: int = 0,
    *,
    answer: str | None = "ok",
    status: Status = Status.answered,
    steps: int = 1,
    errors: list[ErrorRecord] | None = None,
) -> Trajectory:
    return Trajectory(
        scenario_id=task,
        trial=trial,
        agent=Component(name="react"),
        model=Component(name="reference"),
        status=status,
        final_answer=answer,
        nodes=[Node(id=i, kind="action") for i in range(steps)],
        usage=EpisodeUsage(model_calls=2, prompt_tokens=10, completion_tokens=5, cost=0.25),
        errors=errors or [],
    )


def write(path: Path, *trajs: Trajectory, tail: str = "") -> None:
    path.write_text("".join(t.to_json_line() for t in trajs) + tail, encoding="utf-8")


def test_digests_follow_appends_and_skip_a_torn_tail(tmp_path: Path) -> None:
    file = tmp_path / TRAJECTORIES
    down = [ErrorRecord(kind="infra", message="endpoint down")]
    a = traj("a", steps=3, status=Status.error, answer=None, errors=down)  # it runs again below
    write(file, a, tail='{"schema": "agent-sandbox/traj')
    index = EpisodeIndex.of(tmp_path)
    (d,) = index.digests
    assert (d.key, d.status, d.steps, d.final_answer) == (("a", 0), "error", 3, None)
    assert (d.usage.cost, d.usage.tokens) == (0.25, 15)

    b = traj("b", status=Status.gave_up, answer=None)
    write(file, a, b)  # the writer's torn line became a whole one
    assert [x.key for x in index.refresh().digests] == [("a", 0), ("b", 0)]
    with file.open("a", encoding="utf-8") as fh:
        fh.write(traj("a", steps=5, answer="again").to_json_line())  # a re-run of episode a
    assert [(x.key, x.steps) for x in index.refresh().digests] == [(("b", 0), 1), (("a", 0), 5)]
    assert index.trajectory(("a", 0)) == read_trajectories(tmp_path)[-1]
    assert index.trajectory(("b", 0)).status is Status.gave_up  # type: ignore[union-attr]
    assert index.trajectory(("c", 0)) is None and index.get(("c", 0)) is None


def test_a_rewritten_file_is_indexed_again(tmp_path: Path) -> None:
    file = tmp_path / TRAJECTORIES
    write(file, traj("a"), traj("b"), traj("c"))
    index = EpisodeIndex.of(tmp_path)
    assert len(index) == 3
    tmp = tmp_path / "compacted"
    write(tmp, traj("c", trial=1))
    os.replace(tmp, file)  # what a resume's compaction does
    assert [d.key for d in index.refresh().digests] == [("c", 1)]
    assert index.trajectory(("c", 1)).trial == 1  # type: ignore[union-attr]


def test_infra_errors_and_a_missing_file(tmp_path: Path) -> None:
    assert len(EpisodeIndex.of(tmp_path)) == 0
    err = traj(
        "a",
        status=Status.error,
        answer=None,
        errors=[ErrorRecord(kind="infra", message="endpoint down")],
    )
    write(tmp_path / TRAJECTORIES, err, traj("b", status=Status.error, answer=None))
    digests = EpisodeIndex.of(tmp_path).digests
    assert [d.infra_error for d in digests] == [True, False]


def test_a_line_that_is_not_a_trajectory_is_a_clear_error(tmp_path: Path) -> None:
    write(tmp_path / TRAJECTORIES, traj("a"), tail="not json\n")
    with pytest.raises(RunError, match="not a trajectory line"):
        EpisodeIndex.of(tmp_path)


def test_an_episode_is_found_whatever_the_writer_put_first(tmp_path: Path) -> None:
    a, b, c = traj("a", 2), traj("b", 1), traj("c", 3)
    tricky = a.model_dump(mode="json", by_alias=True)
    tricky["run_id"] = 'x", "scenario_id": "evil", "trial": 9, "'  # quotes inside a string
    reordered = {"trial": 1, **{k: v for k, v in b.model_dump(mode="json").items() if k != "trial"}}
    padded = c.model_dump(mode="json", by_alias=True)
    padded["run_id"] = "r" * 5000  # the id is beyond the first bytes: the line is parsed
    lines = [json.dumps(tricky), json.dumps(reordered, separators=(",", ":")), json.dumps(padded)]
    (tmp_path / TRAJECTORIES).write_text("\n".join(lines) + "\n")
    index = EpisodeIndex.of(tmp_path)
    assert index.keys == [("a", 2), ("b", 1), ("c", 3)]
    assert index.trajectory(("c", 3)).run_id == "r" * 5000  # type: ignore[union-attr]
    assert [d.steps for d in index.digests] == [1, 1, 1]
