"""Strategies under identical tool behaviour, on the bundled default suite.

- With the seeded noisy offline model, DFSDT (which backtracks after a give-up) solves more
  tasks than ReAct (which stops), as in the ToolLLM paper.
- With faults injected, a call that two strategies both make meets the same fault in both: the
  fault is a function of the call, never of a global counter.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agents.trajectory import Trajectory
from sandbox.compare.comparison import run_comparison
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig

DEFAULT = Path(__file__).resolve().parents[2] / "scenarios" / "default"


def test_dfsdt_beats_react_with_the_noisy_model(tmp_path: Path) -> None:
    config = RunConfig(suite=str(DEFAULT), model="noisy-reference:0.3", seed=0, out=str(tmp_path))
    comparison = run_comparison(config, ["react", "dfsdt"], show_progress=False)
    react, dfsdt = comparison.strategies
    assert dfsdt.pass_rate > react.pass_rate
    (paired,) = comparison.paired
    assert paired.only_b > paired.only_a  # episodes only DFSDT solved outnumber the reverse
    # DFSDT pays for its search with extra model calls, not with fewer answers
    assert dfsdt.usage.model_calls >= react.usage.model_calls


def _call_outcomes(traj: Trajectory) -> dict[tuple[str, str, str, int], str]:
    """(task, function, canonical args, nth identical call) -> provenance, in call order."""
    seen: Counter[tuple[str, str]] = Counter()
    out: dict[tuple[str, str, str, int], str] = {}
    for node in sorted(traj.nodes, key=lambda n: n.id):
        for call in node.calls:
            obs = call.observation
            if obs is None or call.args is None or obs.provenance in ("invalid", "unknown"):
                continue
            key = (call.name, json.dumps(call.args, sort_keys=True))
            seen[key] += 1
            out[(traj.scenario_id, *key, seen[key])] = obs.provenance
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_the_same_call_meets_the_same_fault_in_every_strategy(tmp_path: Path, seed: int) -> None:
    config = RunConfig(
        suite=str(DEFAULT),
        model="noisy-reference:0.3",
        seed=seed,
        fault_rate=0.3,
        fault_seed=seed,
        out=str(tmp_path),
    )
    comparison = run_comparison(config, ["react", "dfsdt", "react@3"], show_progress=False)
    outcomes = [
        {k: v for t in read_trajectories(s.run) for k, v in _call_outcomes(t).items()}
        for s in comparison.strategies
    ]
    shared = set(outcomes[0]) & set(outcomes[1]) & set(outcomes[2])
    faults = [k for k in shared if outcomes[0][k].startswith("fault:")]
    assert len(shared) > 50 and faults, "the runs must share calls, some of them faulted"
    for key in shared:
        assert outcomes[0][key] == outcomes[1][key] == outcomes[2][key], key
