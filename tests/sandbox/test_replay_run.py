"""Offline replay: a stored run is reproduced exactly, and an edited recording is caught."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sandbox.cli import main
from sandbox.errors import RunError
from sandbox.replay import compare_trajectories, replay_run
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"


def _run(tmp_path: Path, suite: Path, agent: str, model: str = "noisy-reference:0.5") -> Path:
    config = RunConfig(suite=str(suite), agent=agent, model=model, seed=3, out=str(tmp_path))
    return Path(run_suite(config, show_progress=False).path)


@pytest.mark.parametrize("agent", ["react", "dfsdt", "react@2"])
def test_a_run_replays_with_zero_divergences(tmp_path: Path, agent: str) -> None:
    run = _run(tmp_path / "runs", MINI, agent)
    report = replay_run(run)
    assert report.ok, [v.first_diff for v in report.verdicts if not v.ok]
    assert report.episodes == len(read_trajectories(run))
    assert report.calls_checked > 0
    assert report.calls_matched == report.calls_checked


def test_call_level_replay_reissues_every_sent_call(tmp_path: Path) -> None:
    run = _run(tmp_path / "runs", MINI, "dfsdt")
    sent = sum(
        1
        for t in read_trajectories(run)
        for n in t.nodes
        for c in n.calls
        if c.observation and c.observation.provenance not in ("invalid", "unknown")
    )
    report = replay_run(run, mode="calls")
    assert report.ok
    assert report.calls_checked == sent > 0


def _edit_first_reference_recording(suite: Path) -> tuple[str, str]:
    """Change the body of the recording behind the first reference call; return (tool, api)."""
    files = sorted((suite / "recordings").glob("*.jsonl"))
    for f in files:
        lines = f.read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            rec = json.loads(line)
            if rec["response"]["ok"]:
                rec["response"]["body"] = {"edited": True}
                lines[i] = json.dumps(rec)
                f.write_text("\n".join(lines) + "\n", encoding="utf-8")
                return rec["tool"], rec["api"]
    raise AssertionError("no ok recording in the fixture suite")


def test_an_edited_recording_makes_replay_fail_and_name_the_step(tmp_path: Path) -> None:
    suite = tmp_path / "mini"
    shutil.copytree(MINI, suite)
    run = _run(tmp_path / "runs", suite, "react", model="reference")
    tool, api = _edit_first_reference_recording(suite)

    report = replay_run(run)
    assert not report.ok
    assert report.suite_changed
    diffs = [v.first_diff for v in report.verdicts if not v.ok]
    assert diffs and all(d is not None and d.node is not None for d in diffs)
    assert any("observation" in d.field for d in diffs if d is not None)

    calls = replay_run(run, mode="calls")
    assert not calls.ok
    assert any(
        v.first_diff is not None and '"edited"' in str(v.first_diff.got) for v in calls.verdicts
    )
    assert main(["replay", str(run)]) == 1
    assert main(["replay", str(run), "--calls"]) == 1


def test_replay_cli_exits_zero_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    run = _run(tmp_path / "runs", MINI, "dfsdt")
    assert main(["replay", str(run), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["divergent"] == 0 and out["episodes"] == len(read_trajectories(run))


def test_replay_of_a_missing_run_is_a_clear_error(tmp_path: Path, capsys) -> None:
    assert main(["replay", str(tmp_path / "nope")]) == 1
    assert "not a run folder" in capsys.readouterr().err


def test_compare_trajectories_names_the_first_differing_node(tmp_path: Path) -> None:
    run = _run(tmp_path / "runs", MINI, "react", model="reference")
    traj = next(t for t in read_trajectories(run) if len(t.nodes) >= 2)
    changed = traj.model_copy(deep=True)
    changed.nodes[1].content = "something else"
    verdict = compare_trajectories(traj, changed)
    assert not verdict.ok
    assert verdict.first_diff is not None
    assert (verdict.first_diff.node, verdict.first_diff.field) == (traj.nodes[1].id, "content")


def test_a_replay_narrowed_to_tasks_replays_those_and_keeps_its_re_run_where_asked(
    tmp_path: Path,
) -> None:
    """``--tasks`` replays only the episodes of those tasks; ``--out`` keeps the re-run there
    (the report says where), and without it the re-run is not kept; the report names the run
    it replayed. A selection with no recorded episode is a run error."""
    run = _run(tmp_path / "runs", MINI, "react")
    recorded = read_trajectories(run)
    first = recorded[0].scenario_id
    report = replay_run(run, tasks=[first], out=tmp_path / "again")
    assert report.ok and report.run == str(run)
    assert [v.scenario_id for v in report.verdicts] == [
        t.scenario_id for t in recorded if t.scenario_id == first and t.nodes
    ]
    assert report.replay_run is not None
    assert Path(report.replay_run).parent == tmp_path / "again"
    assert {t.scenario_id for t in read_trajectories(report.replay_run)} == {first}
    assert replay_run(run, tasks=[first]).replay_run is None
    (run / "trajectories.jsonl").write_text("", encoding="utf-8")
    with pytest.raises(RunError, match=f"{run}: no recorded episodes to replay"):
        replay_run(run)
