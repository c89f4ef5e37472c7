from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from sandbox.commands import export as export_cmd
from sandbox.commands import importer as import_cmd
from sandbox.errors import ConfigError
from sandbox.interop.export_toolbench import read_converted
from sandbox.store import read_trajectories


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="sandbox")
    sub = parser.add_subparsers(dest="command", required=True)
    import_cmd.register(sub)
    export_cmd.register(sub)
    args = parser.parse_args(argv)
    return args.handler(args)


def _steps(traj) -> list[tuple]:
    """The calls of the chosen path (ToolBench's converted answers keep no thought of a turn
    that called a function)."""
    return [
        (c.name, c.arguments, c.observation.content if c.observation else None)
        for n in traj.chosen()
        for c in n.calls
    ]


def test_round_trip_real_answers(
    shared_data: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = tmp_path / "tb"
    answers = shared_data / "toolbench/data_example/answer"
    folders = [str(answers / "G1_answer"), str(answers / "G2_answer")]
    assert _cli(["import", "toolbench-answers", *folders, "--out", str(suite)]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["read"]["recorded_calls"] == 99
    with pytest.raises(ConfigError, match="already holds a suite"):
        _cli(["import", "toolbench-answers", *folders, "--out", str(suite)])
    run = suite / "original-runs" / "DFS_woFilter_w2"

    out = tmp_path / "converted"
    assert _cli(["export", "toolbench", str(run), str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["G1.json", "G2.json"]
    converted = json.loads((out / "G1.json").read_text(encoding="utf-8"))
    entry = converted["10"]
    assert set(entry) == {"query", "available_tools", "answer"}
    assert set(entry["answer"]) == {"method", "total_steps", "final_answer", "answer_details"}
    assert json.loads(entry["answer"]["final_answer"])["return_type"] == "give_answer"
    assert entry["answer"]["method"] == "DFS_woFilter_w2"
    system = entry["answer"]["answer_details"][0]
    assert system["role"] == "system" and system["message"] == ""
    assert system["next"][0]["role"] == "user" and system["next"][0]["message"] == ""
    tool = system["next"][0]["next"][0]
    assert tool["role"] == "tool" and set(tool["message"]) == {"name", "arguments", "response"}

    original = {t.scenario_id: t for t in read_trajectories(run)}
    back = {t.scenario_id: t for t in read_converted(out)}
    assert set(back) == set(original)
    for sid, traj in original.items():
        assert _steps(back[sid]) == _steps(traj), sid
        assert back[sid].final_answer == traj.final_answer, sid
        assert back[sid].status == traj.status, sid


FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "toolbench_export"


def test_export_writes_what_toolbenchs_converter_writes_for_the_same_tree(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ToolBench-layout DFS tree (a failed branch, then a thought-only turn, a thought with a
    call, an invented name, parallel calls and a Finish) imported and exported is, field by
    field, the converted answer written by hand from convert_to_answer_format.py's rules."""
    suite = tmp_path / "suite"
    argv = ["import", "toolbench-answers", str(FIXTURE / "G1_instruction"), "--out", str(suite)]
    assert _cli(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["read"]["reproduced"] == 1, summary["notes"]
    out = tmp_path / "converted"
    assert (
        _cli(["export", "toolbench", str(suite / "original-runs" / "DFS_woFilter_w2"), str(out)])
        == 0
    )
    got = json.loads((out / "G1_instruction.json").read_text(encoding="utf-8"))["3"]
    want = json.loads((FIXTURE / "converted" / "G1_instruction.json").read_text())["3"]
    assert got["query"] == want["query"]
    assert got["available_tools"] == want["available_tools"]
    for key in ("method", "total_steps", "final_answer"):
        assert got["answer"][key] == want["answer"][key], key
    got_chain = [(n["role"], n["message"]) for n in _nodes(got["answer"]["answer_details"])]
    want_chain = [(n["role"], n["message"]) for n in _nodes(want["answer"]["answer_details"])]
    assert got_chain == want_chain
    assert got["answer"]["answer_details"] == want["answer"]["answer_details"]


def _nodes(details: list[dict]) -> list[dict]:
    out, nodes = [], details
    while nodes:
        out.append(nodes[0])
        nodes = nodes[0]["next"]
    return out
