"""``sandbox import bfcl`` and ``sandbox export bfcl`` on the tests' hand-made copy of BFCL's
layout (tests/fixtures/bfcl/copy: one multi_turn_base and one multi_turn_miss_func entry over a
notebook class and a stateless counter): the tasks an entry becomes, runs that pass and fail
under BFCL's per-turn rule, the result files BFCL's checker reads, and bad input refused in one
line with nothing written."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agents.trajectory import Trajectory
from mock_tools import load_suite
from mock_tools.worlds.verdict import Action, judge, replay
from sandbox.cli import main
from sandbox.eval.pass_rate import label_episode
from sandbox.interop.export_bfcl import bfcl_result
from sandbox.store import read_trajectories

COPY = Path(__file__).resolve().parents[1] / "fixtures" / "bfcl" / "copy"
BOTH = "multi_turn_base,multi_turn_miss_func"


def _import(tmp_path: Path, source: Path = COPY, categories: str = BOTH) -> Path:
    out = tmp_path / "suite"
    assert main(["import", "bfcl", str(source), "--categories", categories, "--out", str(out)]) == 0
    return out


def _run(tmp_path: Path, suite: Path, *args: str) -> Path:
    out = tmp_path / "runs"
    assert main(["run", "--suite", str(suite), "--out", str(out), "--no-plots", *args]) == 0
    return max(out.iterdir(), key=lambda p: p.stat().st_mtime)


def _tasks(suite: Path) -> dict[str, Any]:
    return {t.id: t for t in load_suite(suite).tasks}


# -- import ---------------------------------------------------------------------------------------


def test_an_entry_becomes_a_conversation_in_its_world(tmp_path: Path, capsys) -> None:
    suite = _import(tmp_path)
    summary = json.loads(capsys.readouterr().out)
    assert summary["bfcl_eval"] == "0.0.1"
    assert summary["tasks"] == {"multi_turn_base": 1, "multi_turn_miss_func": 1}
    meta = load_suite(suite).meta
    assert meta.world_adapter is not None
    assert meta.world_adapter.source == str(COPY.resolve())
    assert meta.world_adapter.classes == ["NoteBook", "Counter"]
    assert meta.defaults == {"max_depth": 21}  # BFCL's 20 steps per turn, then the reply
    task = _tasks(suite)["multi_turn_base_0"]
    assert task.query == "Add a note 'todo' saying 'buy milk'."
    assert task.group == "multi_turn_base"
    assert [t.api for t in task.tools] == [
        "add_note",
        "read_note",
        "delete_note",
        "tag",
        "count_words",
    ]
    assert task.user.script[0].say.startswith("Read the note 'plan'")
    steps = [(s.api, s.args, s.turn) for s in task.reference.steps]
    assert steps == [
        ("add_note", {"title": "todo", "text": "buy milk"}, 0),
        ("read_note", {"title": "plan"}, 1),  # a positional argument, named by the signature
        ("count_words", {"text": "one two three"}, 1),
    ]
    assert task.world.state == {
        "NoteBook": {"owner": "ada", "pages": {"plan": "go north"}},
        "Counter": {},
    }
    checks = task.world.checks
    assert (checks.gold, checks.judged_turns, checks.turn_answers, checks.calls_only) == (
        False,
        "with_gold",
        True,
        True,
    )
    assert task.reference.replies == ["Done with request 1."]


def test_missed_functions_are_hidden_until_bfcls_turn_reveals_them(tmp_path: Path) -> None:
    task = _tasks(_import(tmp_path))["multi_turn_miss_func_0"]
    assert task.user.hidden == ["delete_note"]
    first, second = task.user.script
    assert first.say == ("I have updated some more functions you can choose from. What about now?")
    assert first.reveal == ["delete_note"]
    assert second.reveal == []
    assert [s.turn for s in task.reference.steps] == [1, 2]


def test_the_import_refers_to_the_copy_and_copies_none_of_its_code(tmp_path: Path) -> None:
    suite = _import(tmp_path)
    files = sorted(str(p.relative_to(suite)) for p in suite.rglob("*") if p.is_file())
    assert [f for f in files if not f.startswith(".cache")] == [
        "suite.yaml",
        "tasks/multi_turn_base.yaml",
        "tasks/multi_turn_miss_func.yaml",
    ]


def _refused(tmp_path: Path, capsys, argv: list[str]) -> str:
    out = tmp_path / "out"
    assert main(["import", "bfcl", *argv, "--out", str(out)]) == 2
    assert not out.exists()
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".out")] == []
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    return err


def test_a_category_that_does_not_exist_is_refused(tmp_path: Path, capsys) -> None:
    err = _refused(tmp_path, capsys, [str(COPY), "--categories", "multi_turn_nope"])
    assert "unknown BFCL category 'multi_turn_nope'" in err


def test_a_category_the_copy_lacks_is_refused(tmp_path: Path, capsys) -> None:
    err = _refused(tmp_path, capsys, [str(COPY)])  # the copy has no miss_param entries
    assert "BFCL_v4_multi_turn_miss_param.json" in err


def test_a_copy_of_another_layout_is_refused(tmp_path: Path, capsys) -> None:
    other = Path(shutil.copytree(COPY, tmp_path / "other"))
    mapping = other / "bfcl_eval" / "constants" / "category_mapping.py"
    mapping.write_text('VERSION_PREFIX = "BFCL_v9"\n')
    err = _refused(tmp_path, capsys, [str(other), "--categories", "multi_turn_base"])
    assert "BFCL_v9_multi_turn_base.json" in err


def test_an_entry_naming_an_unknown_class_is_refused(tmp_path: Path, capsys) -> None:
    other = Path(shutil.copytree(COPY, tmp_path / "other"))
    data = other / "bfcl_eval" / "data" / "BFCL_v4_multi_turn_base.json"
    entry = json.loads(data.read_text())
    entry["initial_config"]["Shop"] = {"items": 1}
    data.write_text(json.dumps(entry) + "\n")
    err = _refused(tmp_path, capsys, [str(other), "--categories", "multi_turn_base"])
    assert "multi_turn_base_0" in err and "unknown API class 'Shop'" in err


def test_a_gold_call_that_is_no_call_is_refused(tmp_path: Path, capsys) -> None:
    other = Path(shutil.copytree(COPY, tmp_path / "other"))
    answers = other / "bfcl_eval" / "data" / "possible_answer" / "BFCL_v4_multi_turn_base.json"
    answers.write_text(answers.read_text().replace("count_words(", "count_words[0]("))
    err = _refused(tmp_path, capsys, [str(other), "--categories", "multi_turn_base"])
    assert "gold call" in err


# -- runs -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("agent", ["react", "dfsdt"])
def test_the_reference_passes_every_entry_and_its_run_replays(
    tmp_path: Path, capsys, agent: str
) -> None:
    suite = _import(tmp_path)
    run = _run(tmp_path, suite, "--model", "reference", "--agent", agent, "--json")
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["pass_rate"] == 1.0 and summary["episodes"] == 2
    for traj in read_trajectories(run):
        assert traj.world is not None and traj.world["turns"] == [True, True]
    assert main(["replay", str(run)]) == 0


def _episode(suite: Path, task_id: str, actions: list[Action]) -> tuple[Any, Any]:
    loaded = load_suite(suite)
    task = loaded.task(task_id)
    assert loaded.world is not None
    done = replay(loaded.world, task, actions, 0)
    return task, judge(loaded.world, task, done, 0)


def test_a_turn_fails_when_a_gold_answer_is_missing_though_the_state_is_the_gold_one(
    tmp_path: Path,
) -> None:
    suite = _import(tmp_path)
    actions = [
        Action("add_note", {"title": "todo", "text": "buy milk"}, turn=0),
        Action("read_note", {"title": "plan"}, turn=1),
        Action("count_words", {"text": "one two"}, turn=1),  # the wrong words: answers 2
    ]
    _, verdict = _episode(suite, "multi_turn_base_0", actions)
    assert verdict.turns == [True, False]
    failed = [c for c in verdict.checks if not c.passed]
    assert [c.kind for c in failed] == ["turn_answers"]
    assert "turn 1: 1 gold answer(s) missing: 3" in failed[0].detail


def test_a_gold_answer_given_in_an_earlier_turn_counts(tmp_path: Path) -> None:
    suite = _import(tmp_path)
    actions = [
        Action("add_note", {"title": "todo", "text": "buy milk"}, turn=0),
        Action("count_words", {"text": "one two three"}, turn=0),
        Action("read_note", {"title": "plan"}, turn=1),
    ]
    _, verdict = _episode(suite, "multi_turn_base_0", actions)
    assert verdict.turns == [True, True] and verdict.passed


def test_a_turn_with_gold_calls_needs_a_call_of_the_agent(tmp_path: Path) -> None:
    suite = _import(tmp_path)
    actions = [
        Action("add_note", {"title": "todo", "text": "buy milk"}, turn=0),
        Action("read_note", {"title": "plan"}, turn=0),
        Action("count_words", {"text": "one two three"}, turn=0),
    ]
    _, verdict = _episode(suite, "multi_turn_base_0", actions)
    assert verdict.turns == [True, False]
    assert [c.kind for c in verdict.checks if not c.passed] == ["turn_calls"]


def test_a_turn_without_gold_calls_is_not_judged(tmp_path: Path) -> None:
    suite = _import(tmp_path)
    early = [  # the deletion is made a turn before BFCL's gold makes it: turn 0 is not judged
        Action("delete_note", {"title": "plan"}, turn=0),
        Action("read_note", {"title": "x"}, turn=1),
        Action("tag", {"label": "clean"}, turn=2),
    ]
    _, verdict = _episode(suite, "multi_turn_miss_func_0", early)
    assert [c.detail.split(":")[0] for c in verdict.checks if c.kind == "turn"] == [
        "turn 1",
        "turn 2",
    ]
    assert verdict.passed


def test_a_give_up_after_every_turn_passed_is_solved_as_bfcl_labels_it(tmp_path: Path) -> None:
    suite = _import(tmp_path)
    task, verdict = _episode(
        suite,
        "multi_turn_base_0",
        [
            Action("add_note", {"title": "todo", "text": "buy milk"}, turn=0),
            Action("read_note", {"title": "plan"}, turn=1),
            Action("count_words", {"text": "one two three"}, turn=1),
        ],
    )
    traj = Trajectory.model_validate(
        {
            "run_id": "r",
            "scenario_id": task.id,
            "agent": {"name": "react"},
            "model": {"name": "m"},
            "status": "gave_up",
            "world": verdict.model_dump(mode="json"),
        }
    )
    label = label_episode(traj, task)
    assert (label.label, label.method) == ("solved", "check")
    turn_failed = [{"kind": "turn", "passed": False, "detail": "turn 1: x"}]
    failing = traj.model_copy(update={"world": {**verdict.model_dump(), "checks": turn_failed}})
    assert label_episode(failing, task).label == "unsolved"


def test_a_noisy_run_is_exported_as_bfcls_result_files(tmp_path: Path, capsys) -> None:
    suite = _import(tmp_path)
    run = _run(tmp_path, suite, "--model", "noisy-reference:0.5", "--seed", "3")
    out = tmp_path / "bfcl"
    capsys.readouterr()
    assert main(["export", "bfcl", str(run), "--out", str(out)]) == 0
    assert json.loads(capsys.readouterr().out)["episodes"] == 2
    folder = out / "result" / "gpt-4o-2024-11-20-FC" / "multi_turn"
    assert sorted(p.name for p in folder.iterdir()) == [
        "BFCL_v4_multi_turn_base_result.json",
        "BFCL_v4_multi_turn_miss_func_result.json",
    ]
    line = json.loads((folder / "BFCL_v4_multi_turn_base_result.json").read_text())
    traj = next(t for t in read_trajectories(run) if t.scenario_id == "multi_turn_base_0")
    assert line == {"id": "multi_turn_base_0", "result": bfcl_result(traj, 2)}


def test_an_episode_is_written_step_by_step_and_turn_by_turn(tmp_path: Path) -> None:
    suite = _import(tmp_path)
    run = _run(tmp_path, suite, "--model", "reference")
    traj = next(t for t in read_trajectories(run) if t.scenario_id == "multi_turn_miss_func_0")
    assert bfcl_result(traj, 3) == [
        [],
        [[{"delete_note": '{"title": "plan"}'}]],
        [[{"tag": '{"label": "clean"}'}]],
    ]
    cut = traj.model_copy(update={"chosen_path": traj.chosen_path[:2]})
    assert bfcl_result(cut, 3) == [[], [], []]  # turns never reached are empty


def test_exporting_a_run_of_another_suite_is_refused(tmp_path: Path, capsys) -> None:
    tiny = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tinyworld"
    run = _run(tmp_path, tiny, "--model", "reference", "--tasks", "pay_bob")
    capsys.readouterr()
    assert main(["export", "bfcl", str(run), "--out", str(tmp_path / "x")]) == 2
    assert "is not a BFCL import" in capsys.readouterr().err


def test_gold_calls_are_run_with_the_arguments_bfcl_wrote_whatever_the_doc_says(
    tmp_path: Path, capsys
) -> None:
    """BFCL's gold holds calls whose arguments its own docs type otherwise (close_ticket with
    ticket_id 'ticket_001' for an integer): validate and run take them as BFCL runs them (a
    suite of all 200 multi_turn_base entries failed validation on one)."""
    other = Path(shutil.copytree(COPY, tmp_path / "other"))
    answers = other / "bfcl_eval" / "data" / "possible_answer" / "BFCL_v4_multi_turn_base.json"
    answers.write_text(answers.read_text().replace("read_note('plan')", "read_note(7)"))
    suite = _import(tmp_path, other, "multi_turn_base")
    run = _run(tmp_path, suite, "--model", "reference", "--json")
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["pass_rate"] == 1.0
    traj = read_trajectories(run)[0]
    calls = [c for n in traj.nodes for c in n.calls if c.name == "read_note"]
    assert calls[0].args == {"title": 7}
    assert '{\\"error\\": \\"no page 7\\"}' in calls[0].observation.content


def test_the_export_gives_the_runs_labels_as_bfcls_leaderboard_columns(
    tmp_path: Path, capsys
) -> None:
    suite = _import(tmp_path)
    run = _run(tmp_path, suite, "--model", "reference")
    capsys.readouterr()
    assert main(["export", "bfcl", str(run), "--out", str(tmp_path / "bfcl")]) == 0
    columns = json.loads(capsys.readouterr().out)["sandbox_columns"]
    assert columns == {
        "Multi Turn Overall Acc": 50.0,  # the unweighted mean of four, two missing as 0
        "Base": 100.0,
        "Miss Func": 100.0,
        "Miss Param": "N/A",
        "Long Context": "N/A",
    }
