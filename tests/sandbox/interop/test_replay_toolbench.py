"""Replaying ToolBench's real DFSDT trees (recorded against live RapidAPI in 2023), file by file.

Every answer file of ``G1_answer`` and ``G2_answer`` must import and replay with 0 divergences:
``sandbox replay`` (our DFSDT re-run with the recorded turns against the suite's mock tools) and
``sandbox replay --calls`` (every recorded call of every branch re-issued).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from sandbox.interop import import_answers
from sandbox.replay import ReplayReport, replay_run
from sandbox.store import read_trajectories

DATA = Path(__file__).resolve().parents[3] / ".." / "shared" / "data"
ANSWERS = DATA / "toolbench" / "data_example" / "answer"
FOLDERS = ("G1_answer", "G2_answer")
FILES = sorted(p for f in FOLDERS for p in (ANSWERS / f).glob("*.json")) if ANSWERS.is_dir() else []
RUN = "original-runs/DFS_woFilter_w2"


def _task_id(path: Path) -> str:
    return f"{path.parent.name.removesuffix('_answer')}-{path.name.split('_', 1)[0]}"


@pytest.fixture(scope="module")
def replays(tmp_path_factory: pytest.TempPathFactory) -> dict[str, ReplayReport | Path]:
    if not FILES:
        pytest.skip(f"ToolBench's answer files not found at {ANSWERS} (only present in CI)")
    out = tmp_path_factory.mktemp("tb") / "suite"
    summary = import_answers([ANSWERS / f for f in FOLDERS], out)
    assert summary.read["files"] == len(FILES) and not summary.skipped
    run = out / RUN
    return {
        "run": run,
        "agent": replay_run(run, out=out.parent / "replayed"),
        "calls": replay_run(run, mode="calls"),
    }


@pytest.mark.parametrize("path", FILES or [None], ids=lambda p: p.name if p else "no-data")
@pytest.mark.parametrize("mode", ["agent", "calls"])
def test_each_toolbench_tree_replays_node_for_node(
    replays: dict[str, ReplayReport | Path], path: Path, mode: str
) -> None:
    report = replays[mode]
    assert isinstance(report, ReplayReport)
    (verdict,) = [v for v in report.verdicts if v.scenario_id == _task_id(path)]
    assert verdict.ok, verdict.first_diff
    assert verdict.calls_checked == verdict.calls_matched > 0


def test_totals_of_the_replays(replays: dict[str, ReplayReport | Path]) -> None:
    agent, calls = replays["agent"], replays["calls"]
    assert isinstance(agent, ReplayReport) and isinstance(calls, ReplayReport)
    assert agent.episodes == calls.episodes == 10 and agent.ok and calls.ok
    # 112 calls in the 10 trees: 99 reached RapidAPI, 13 invented names answered by ToolBench;
    # rendered as ToolBench renders (ASCII-escaped, cut at 1024 + "..."), every text is identical
    assert agent.calls_checked == agent.calls_exact == 112
    assert calls.calls_checked == calls.calls_matched == 99


def test_replayed_chosen_paths_end_in_the_original_final_answers(
    replays: dict[str, ReplayReport | Path],
) -> None:
    run = replays["run"]
    assert isinstance(run, Path)
    (replayed_dir,) = [p for p in (run.parents[2] / "replayed").iterdir() if p.is_dir()]
    original = {t.scenario_id: t for t in read_trajectories(run)}
    replayed = {t.scenario_id: t for t in read_trajectories(replayed_dir)}
    answered = [sid for sid, t in original.items() if t.status.value == "answered"]
    assert len(answered) == 6
    for sid in answered:
        assert replayed[sid].final_answer == original[sid].final_answer
        assert replayed[sid].chosen_path == original[sid].chosen_path
