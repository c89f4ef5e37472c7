"""Hand-built episodes and run folders for the run store tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from agents.trajectory import Component, ErrorRecord, Status, Trajectory
from sandbox.store import Manifest, RunStore, SuiteInfo
from sandbox.store.config import RunConfig


def episode(
    task: str,
    trial: int = 0,
    *,
    error: Literal["infra", "agent", "internal"] | None = None,
    answer: str | None = "ok",
    **fields: Any,
) -> Trajectory:
    """An answered episode, or one that ended on an error of ``error``'s kind."""
    return Trajectory(
        scenario_id=task,
        trial=trial,
        agent=Component(name="react"),
        model=Component(name="reference"),
        status=Status.error if error else Status.answered,
        final_answer=answer,
        errors=[ErrorRecord(kind=error, message="endpoint down")] if error else [],
        **fields,
    )


def episode_line(task: str, trial: int = 0, **fields: Any) -> bytes:
    """The trajectory line of ``episode(task, trial, **fields)``."""
    return episode(task, trial, **fields).to_json_line().encode("utf-8")


def new_run(
    tmp_path: Path, *tasks: str, run_id: str = "r", compress: bool = False, suite: str = ""
) -> RunStore:
    """A new run folder under ``tmp_path/runs`` listing trial 0 of each of ``tasks``, locked."""
    manifest = Manifest(
        run_id=run_id,
        config=RunConfig().with_values({"output.compress": compress}),
        suite=SuiteInfo(name="s", path=suite),
        episodes=[(t, 0) for t in tasks],
    )
    return RunStore.create(tmp_path / "runs", manifest)
