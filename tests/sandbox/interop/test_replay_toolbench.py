"""Replaying ToolBench's real DFSDT trajectories (recorded against live RapidAPI in 2023)."""

from __future__ import annotations

from pathlib import Path

from sandbox.interop import import_answers
from sandbox.replay import replay_run
from sandbox.store import read_trajectories

# Two of the ten trees cannot be reproduced by the search as ToolBench publishes it: after a
# function-call turn is cut by the depth limit, ToolBench's 2023 run did not generate the parent's
# second child, which its DFS code (and ours) does. docs/interop.md has the details.
KNOWN_SEARCH_DIFFERENCES = {"G1-57", "G1-69"}


def _import(shared_data: Path, tmp_path: Path) -> Path:
    answers = shared_data / "toolbench" / "data_example" / "answer"
    import_answers([answers / "G1_answer", answers / "G2_answer"], tmp_path / "suite")
    return tmp_path / "suite" / "original-run"


def test_every_recorded_call_of_every_branch_gets_its_original_observation(
    shared_data: Path, tmp_path: Path
) -> None:
    run = _import(shared_data, tmp_path)
    report = replay_run(run, mode="calls")
    assert report.episodes == 10
    assert report.ok, [v.first_diff for v in report.verdicts if not v.ok]
    assert report.calls_checked == report.calls_matched == 99


def test_our_dfsdt_with_the_replay_model_reproduces_toolbench_trees(
    shared_data: Path, tmp_path: Path
) -> None:
    run = _import(shared_data, tmp_path)
    report = replay_run(run)
    assert report.episodes == 10
    divergent = {v.scenario_id for v in report.verdicts if not v.ok}
    assert divergent <= KNOWN_SEARCH_DIFFERENCES
    assert report.episodes - report.divergent >= 8
    # every observation the replayed search met is the original one
    assert report.calls_matched == report.calls_checked > 0


def test_replayed_chosen_paths_end_in_the_original_final_answers(
    shared_data: Path, tmp_path: Path
) -> None:
    run = _import(shared_data, tmp_path)
    out = tmp_path / "replayed"
    replay_run(run, out=out)
    (replayed_dir,) = [p for p in out.iterdir() if p.is_dir()]
    original = {t.scenario_id: t for t in read_trajectories(run)}
    replayed = {t.scenario_id: t for t in read_trajectories(replayed_dir)}
    answered = [sid for sid, t in original.items() if t.status.value == "answered"]
    assert answered
    for sid in answered:
        if sid in KNOWN_SEARCH_DIFFERENCES:
            continue
        assert replayed[sid].final_answer == original[sid].final_answer
        assert replayed[sid].chosen_path == original[sid].chosen_path
