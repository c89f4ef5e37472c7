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
    return [
        (n.content, c.name, c.arguments, c.observation.content if c.observation else None)
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
    assert entry["answer"]["answer_details"][0]["role"] == "system"

    original = {t.scenario_id: t for t in read_trajectories(run)}
    back = {t.scenario_id: t for t in read_converted(out)}
    assert set(back) == set(original)
    for sid, traj in original.items():
        assert _steps(back[sid]) == _steps(traj), sid
        assert back[sid].final_answer == traj.final_answer, sid
        assert back[sid].status == traj.status, sid
