"""A replay says which episodes its run planned but never recorded (a run cut short), among the
tasks asked for, and replays the rest."""

from __future__ import annotations

import shutil
from pathlib import Path

from sandbox.replay import replay_run

FIXTURE = Path(__file__).resolve().parents[2] / "replays" / "react-noisy-default"


def _cut_short(tmp_path: Path, drop: set[str]) -> Path:
    """The committed fixture with the trajectories of ``drop`` taken out (the manifest still
    plans them)."""
    run = tmp_path / FIXTURE.name
    shutil.copytree(FIXTURE, run)
    lines = (run / "trajectories.jsonl").read_text().splitlines(keepends=True)
    kept = [line for line in lines if not any(f'"scenario_id": "{t}"' in line for t in drop)]
    assert len(kept) == len(lines) - len(drop)
    (run / "trajectories.jsonl").write_text("".join(kept))
    return run


def test_planned_episodes_without_a_trajectory_are_listed_as_unrecorded(tmp_path: Path) -> None:
    run = _cut_short(tmp_path, {"g1_flight_baggage", "g1_acme_ceo"})
    report = replay_run(run, mode="calls")
    assert report.unrecorded == ["g1_flight_baggage#0", "g1_acme_ceo#0"]
    assert report.episodes == 56 and report.divergent == 0


def test_only_the_tasks_asked_for_are_reported(tmp_path: Path) -> None:
    run = _cut_short(tmp_path, {"g1_flight_baggage", "g1_acme_ceo"})
    asked = replay_run(run, tasks=["g1_acme_ceo", "g1_initech_price"], mode="calls")
    assert asked.unrecorded == ["g1_acme_ceo#0"]
    assert [v.scenario_id for v in asked.verdicts] == ["g1_initech_price"]
    recorded = replay_run(run, tasks=["g1_initech_price"], mode="calls")
    assert recorded.unrecorded == []
