"""End to end: with injected faults, the offline reference model retries a faulted call (or gives
up after its retries) instead of carrying on as if the call had answered."""

from __future__ import annotations

from pathlib import Path

from agents.models.reference import MAX_RETRIES
from sandbox.run import run_suite
from sandbox.store import RunConfig, read_trajectories

SUITE = Path(__file__).resolve().parents[2] / "scenarios" / "default"


def test_every_faulted_call_is_retried_or_abandoned(tmp_path: Path) -> None:
    config = RunConfig(
        suite=str(SUITE), agent="react", model="reference", fault_rate=0.3, out=str(tmp_path)
    )
    trajs = read_trajectories(run_suite(config, show_progress=False).path)
    faulted = 0
    for t in trajs:
        for i, n in enumerate(t.nodes):
            if not any(
                c.observation and c.observation.provenance.startswith("fault:") for c in n.calls
            ):
                continue
            faulted += 1
            after = t.nodes[i + 1]
            if after.kind == "give_up":
                assert "keeps failing" in (after.content or "")
                continue
            assert [(c.name, c.arguments) for c in after.calls] == [
                (c.name, c.arguments) for c in n.calls
            ], f"{t.scenario_id}: node {after.id} did not retry the faulted call"
    assert faulted >= 10
    gave_up = [t for t in trajs if t.status.value == "gave_up"]
    for t in gave_up:  # only after MAX_RETRIES retries of one call
        assert sum(1 for n in t.nodes if "try it again" in (n.content or "")) >= MAX_RETRIES
