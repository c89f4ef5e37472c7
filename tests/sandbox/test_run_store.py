"""The run folder: manifest, append + fsync, torn tails, compaction for resume."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import pytest

from agents.trajectory import Component, ErrorRecord, Status, Trajectory
from sandbox.errors import RunError
from sandbox.store import (
    Manifest,
    RunStore,
    SuiteInfo,
    make_run_id,
    needs_rerun,
    read_trajectories,
)
from sandbox.store.config import RunConfig


def _traj(task: str, trial: int = 0, status: Status = Status.answered, **kw) -> Trajectory:
    return Trajectory(
        scenario_id=task,
        trial=trial,
        agent=Component(name="react"),
        model=Component(name="reference"),
        status=status,
        final_answer="ok",
        **kw,
    )


def _store(tmp_path: Path, run_id: str = "r1") -> RunStore:
    manifest = Manifest(run_id=run_id, config=RunConfig(), suite=SuiteInfo(name="s"))
    return RunStore.create(tmp_path / "runs", manifest)


def test_run_id_is_readable_and_safe() -> None:
    config = RunConfig(agent="react@4", model="openai:Qwen/Qwen2.5-7B-Instruct@http://h:8000/v1")
    when = datetime(2025, 3, 1, 12, 30, 5, tzinfo=timezone.utc)
    run_id = make_run_id(config, when)
    assert run_id.startswith("20250301-123005-react-4-qwen2.5-7b-instruct-")
    assert "/" not in run_id and ":" not in run_id
    assert make_run_id(config, when) == run_id


def test_manifest_round_trip_and_no_overwrite(tmp_path: Path) -> None:
    store = _store(tmp_path)
    data = json.loads((store.path / "manifest.json").read_text())
    assert data["schema"] == "agent-sandbox/run@1" and data["status"] == "running"
    assert RunStore.open(store.path).manifest.run_id == "r1"
    with pytest.raises(RunError, match="in use by process"):
        _store(tmp_path)  # its writer still holds it
    store.release()
    with pytest.raises(RunError, match="--resume"):
        _store(tmp_path)
    with pytest.raises(RunError, match="not a run folder"):
        RunStore.open(tmp_path)


def test_append_writes_whole_lines_and_reads_latest_per_episode(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append(_traj("a"))
    store.append(_traj("b"))
    store.append(_traj("a", trial=1))
    store.close()
    lines = (store.path / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["schema"] for line in lines)
    keys = [(t.scenario_id, t.trial) for t in read_trajectories(store.path)]
    assert keys == [("a", 0), ("b", 0), ("a", 1)]


def test_torn_tail_is_ignored_by_readers_and_cut_before_appending(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append(_traj("a"))
    store.close()
    file = store.path / "trajectories.jsonl"
    whole = _traj("b").to_json_line()
    with file.open("a") as fh:
        fh.write(whole[: len(whole) // 2])  # a crash mid-write
    assert [t.scenario_id for t in read_trajectories(store.path)] == ["a"]
    again = RunStore.open(store.path)
    again.append(_traj("c"))
    again.close()
    lines = file.read_text().splitlines()
    assert [json.loads(x)["scenario_id"] for x in lines] == ["a", "c"]


def test_a_corrupt_middle_line_is_an_error(tmp_path: Path) -> None:
    store = _store(tmp_path)
    store.append(_traj("a"))
    store.close()
    file = store.path / "trajectories.jsonl"
    file.write_text(file.read_text() + "{not json}\n" + _traj("b").to_json_line())
    with pytest.raises(RunError, match=":2:"):
        read_trajectories(store.path)


def test_compact_drops_infra_errors_and_duplicates(tmp_path: Path) -> None:
    store = _store(tmp_path)
    infra = _traj("a", status=Status.error, errors=[ErrorRecord(kind="infra", message="down")])
    agent_err = _traj("b", status=Status.error, errors=[ErrorRecord(kind="agent", message="x")])
    assert needs_rerun(infra) and not needs_rerun(agent_err)
    c = _traj("c")
    for t in (infra, agent_err, c, c):  # the same line twice: one episode
        store.append(t)
    finished = store.compact()
    assert sorted(finished) == [("b", 0), ("c", 0)]
    lines = (store.path / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 2
    store.append(_traj("a"))  # the re-run of the infra-error episode
    store.close()
    assert sorted(t.scenario_id for t in read_trajectories(store.path)) == ["a", "b", "c"]
