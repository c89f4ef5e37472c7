"""run_suite on a tiny suite with the offline models: scores, determinism, resume, errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from harness_suite import suite_path, write_suite

from agents.trajectory import ErrorRecord, Status
from sandbox.errors import ConfigError
from sandbox.run import resume_run, run_suite
from sandbox.store import RunStore, read_trajectories
from sandbox.store.config import RunConfig

VOLATILE = {"run_id", "started_at", "ended_at", "wall_seconds", "latency_ms"}


def normalised(run: Path) -> list[Any]:
    """The run's trajectories without timestamps, run ids and wall times, in episode order."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in VOLATILE}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    lines = (run / "trajectories.jsonl").read_text().splitlines()
    records = [strip(json.loads(line)) for line in lines]
    return sorted(records, key=lambda r: (r["scenario_id"], r["trial"]))


def _config(tmp_path: Path, **kw: Any) -> RunConfig:
    values: dict[str, Any] = {
        "suite": str(suite_path(tmp_path)),
        "agent": "react",
        "model": "reference",
        "out": str(tmp_path / "runs"),
        "concurrency": 3,
    }
    values.update(kw)
    return RunConfig(**values)


def test_reference_model_solves_every_task(tmp_path: Path) -> None:
    result = run_suite(_config(tmp_path), show_progress=False)
    run = Path(result.path)
    assert result.status == "completed"
    assert result.episodes == result.ran == result.summary.n > 0
    assert result.pass_rate == 1.0, [lb.reason for lb in result.labels if lb.label != "solved"]
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["ended_at"]
    assert manifest["suite"]["fingerprint"].startswith("sha256:")
    assert manifest["config"]["model"]["name"] == "reference"
    assert "pydantic" in manifest["versions"]
    scores = json.loads((run / "scores.json").read_text())
    # the run ends with the evaluator's report, as `sandbox eval` would write it
    assert scores["pass_rate"]["pass_rate"]["value"] == 1.0
    assert set(scores["pass_rate"]["groups"]) >= {"G1"}
    assert (run / "report.md").is_file()
    assert scores["episodes"] == len(scores["labels"]) == result.episodes
    assert scores["usage"]["model_calls"] == result.usage.model_calls > 0
    trajs = read_trajectories(run)
    assert {t.run_id for t in trajs} == {result.run_id}
    assert len(trajs) == result.episodes


def test_noisy_reference_is_lower_and_reproducible(tmp_path: Path) -> None:
    base = dict(model="noisy-reference:0.3", trials=3, seed=7)
    first = run_suite(_config(tmp_path, run_id="a", **base), show_progress=False)
    second = run_suite(_config(tmp_path, run_id="b", concurrency=1, **base), show_progress=False)
    assert first.pass_rate < 1.0
    assert first.pass_rate == second.pass_rate
    assert normalised(Path(first.path)) == normalised(Path(second.path))
    other_seed = run_suite(
        _config(tmp_path, run_id="c", **{**base, "seed": 8}), show_progress=False
    )
    assert normalised(Path(other_seed.path)) != normalised(Path(first.path))


def test_task_selection_by_id_and_glob(tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "own")  # this test names the harness suite's ids
    config = _config(tmp_path, suite=str(suite), tasks=["weather-*,fx-eur-nok"])
    result = run_suite(config, show_progress=False)
    assert sorted(lb.task_id for lb in result.labels) == [
        "fx-eur-nok",
        "weather-lima",
        "weather-oslo",
    ]
    with pytest.raises(ConfigError, match="no task matches nope"):
        run_suite(_config(tmp_path, tasks=["nope"]), show_progress=False)


def test_bad_suite_and_unknown_names_are_config_errors(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot load suite"):
        run_suite(_config(tmp_path, suite=str(tmp_path / "missing")), show_progress=False)
    with pytest.raises(ConfigError, match="known agents"):
        run_suite(_config(tmp_path, agent="reflexion"), show_progress=False)
    with pytest.raises(ConfigError, match="known models"):
        run_suite(_config(tmp_path, model="gpt-9"), show_progress=False)
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_resume_reruns_infra_errors_and_missing_episodes_once(tmp_path: Path) -> None:
    result = run_suite(_config(tmp_path, run_id="r"), show_progress=False)
    run = Path(result.path)
    file = run / "trajectories.jsonl"
    lines = file.read_text().splitlines(keepends=True)
    # lose the last two episodes, turn the first into an infra error, tear the tail
    first = json.loads(lines[0])
    first["status"] = Status.error.value
    first["errors"] = [ErrorRecord(kind="infra", message="endpoint down").model_dump()]
    kept = [json.dumps(first) + "\n", *lines[1:-2]]
    file.write_text("".join(kept) + lines[-2][:40])
    resumed = resume_run(run, show_progress=False)
    assert resumed.ran == 3
    assert resumed.pass_rate == 1.0
    trajs = [json.loads(x) for x in file.read_text().splitlines()]
    keys = [(t["scenario_id"], t["trial"]) for t in trajs]
    assert len(keys) == len(set(keys)) == result.episodes
    manifest = RunStore.open(run).manifest
    assert manifest.status == "completed" and len(manifest.resumed_at) == 1
    again = resume_run(run, show_progress=False)
    assert again.ran == 0 and len(file.read_text().splitlines()) == result.episodes


def test_long_observations_are_truncated_and_marked(tmp_path: Path) -> None:
    """`--max-observation-chars`: the agent sees the cut text (with ToolBench's "..." appended),
    the trajectory records the cut."""
    result = run_suite(_config(tmp_path, max_observation_chars=20), show_progress=False)
    observations = [
        c.observation
        for t in read_trajectories(result.path)
        for n in t.nodes
        for c in n.calls
        if c.observation is not None
    ]
    assert observations
    for obs in observations:
        assert len(obs.content) <= 20 + len("...")
    cut = [o for o in observations if o.truncated]
    assert cut and all(len(o.content) == 23 and o.original_length > 20 for o in cut)
    assert all(o.content.endswith("...") for o in cut)
