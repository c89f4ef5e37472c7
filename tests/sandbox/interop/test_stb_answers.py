"""StableToolBench's answer layouts (fixtures written for these tests, ``tests/fixtures/
stabletoolbench``): DFS trees with parallel ``tool_calls``, CoT chains and ToolEval's converted
answers, mixed in one folder, import into one run per method that replays with 0 divergences;
a folder that holds no answer is an error naming each file and why."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sandbox.cli import main
from sandbox.replay import replay_run
from sandbox.store import RunStore, read_trajectories

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "stabletoolbench" / "data"


@pytest.fixture
def imported(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[dict, Path, str]:
    runs = tmp_path / "runs"
    argv = ["import", "toolbench-answers", str(FIXTURES), "--out", str(tmp_path / "suite")]
    assert main([*argv, "--run-out", str(runs)]) == 0
    out, err = capsys.readouterr()
    return json.loads(out), runs, err


def test_one_run_per_method_each_replaying_node_for_node(imported: tuple[dict, Path, str]) -> None:
    summary, runs, err = imported
    assert summary["runs"] == {
        name: str(runs / name) for name in ("CoT@1", "DFS_woFilter_w2", "CoT@1-converted")
    }
    assert all(f"run folder: {runs / name}" in err for name in summary["runs"])
    assert summary["read"]["episodes"] == summary["read"]["reproduced"] == 6
    assert not summary["skipped"]
    for name in summary["runs"]:
        for mode in ("agent", "calls"):
            report = replay_run(runs / name, mode=mode)  # type: ignore[arg-type]
            assert report.ok and report.episodes == 2, (name, mode, report.verdicts)
            assert report.calls_matched == report.calls_checked > 0


def test_what_each_episode_keeps(imported: tuple[dict, Path, str]) -> None:
    _, runs, _ = imported
    dfs = {t.scenario_id: t for t in read_trajectories(runs / "DFS_woFilter_w2")}
    answered = dfs["G1_instruction-7"]
    # the failed branch gave up (climbing two levels), the root's second child made two
    # parallel calls in one turn, then answered
    assert [(n.parent, n.kind, len(n.calls)) for n in answered.nodes] == [
        (None, "action", 1),
        (0, "give_up", 0),
        (None, "action", 2),
        (2, "finish", 0),
    ]
    assert answered.final_answer == "AB1 was delivered; Café Kettles sells kettles."
    info = answered.tree["toolbench"]
    assert (info["query_id"], info["finish_type"], info["total_steps"]) == ("7", "give_answer", 5)
    gave_up = dfs["G1_instruction-8"]
    assert (
        gave_up.status.value == "gave_up" and gave_up.tree["toolbench"]["finish_type"] == "give_up"
    )
    cot = {t.scenario_id: t for t in read_trajectories(runs / "CoT@1")}
    assert cot["G1_instruction-7"].status.value == "answered"
    assert cot["G1_instruction-8"].end_reason == "chains_exhausted"  # cut at its depth limit
    config = RunStore.open(runs / "CoT@1").manifest.config
    assert (config.agent.name, config.budget.max_depth, config.preset) == (
        "react@1",
        12,
        "toolbench",
    )
    assert config.task_settings["G1_instruction-8"].max_depth == 6
    converted = {t.scenario_id: t for t in read_trajectories(runs / "CoT@1-converted")}
    invented = converted["G1_instruction-8"].nodes[-1].calls[0]
    # ToolEval's input renames invented names; the observation gives the original back
    assert invented.name == "find_unicorns" and invented.hallucinated
    assert converted["G1_instruction-7"].tree["toolbench"]["total_steps"] == 4


def test_a_folder_without_answers_is_an_error_naming_each_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "answers"
    folder.mkdir()
    (folder / "1_DFS_woFilter_w2.json").write_text("{not json")
    (folder / "2_CoT@1.json").write_text(json.dumps({"answer_generation": {"query": "q"}}))
    (folder / "notes.json").write_text(json.dumps(["a list"]))
    suite = tmp_path / "suite"
    code = main(["import", "toolbench-answers", str(folder), "--out", str(suite)])
    out, err = capsys.readouterr()
    assert code == 1 and out == ""
    assert "no episode imported from 3 file(s)" in err
    assert "1_DFS_woFilter_w2.json: unreadable answer file: not JSON" in err
    assert "2_CoT@1.json: unreadable answer file: an answer_generation without a search" in err
    assert "notes.json: unreadable answer file: not a ToolBench answer file" in err
    assert not suite.exists()  # nothing written
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["import", "toolbench-answers", str(empty), "--out", str(suite)]) == 1
    assert "no .json answer files" in capsys.readouterr().err


def test_a_converted_file_cut_to_100_characters_names_the_reason(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    entry = json.loads(
        (FIXTURES / "model_predictions_converted/fixture-model/G1_instruction.json").read_text()
    )
    for answer in entry.values():  # what ToolBench's older converter wrote
        node = answer["answer"]["answer_details"][0]
        while node["next"]:
            node = node["next"][0]
            node["message"] = str(node["message"])[:100]
    bad = tmp_path / "converted" / "G1_instruction.json"
    bad.parent.mkdir()
    bad.write_text(json.dumps(entry))
    assert main(["import", "toolbench-answers", str(bad), "--out", str(tmp_path / "s")]) == 1
    err = capsys.readouterr().err
    assert "cut every message to 100 characters" in err and "entry 7" in err
