from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from appcheck import call_every_api

from mock_tools.suite import load_suite
from sandbox.errors import SandboxError
from sandbox.interop.tooleyes import import_tooleyes


def _fn(name: str, description: str = "") -> dict:
    return {
        "name": name,
        "description": description,
        "parameters": {
            "type": "object",
            "properties": {"q": {"type": "string"}},
            "required": ["q"],
        },
    }


def test_small_library(tmp_path: Path) -> None:
    lib = tmp_path / "te" / "Tool_Library" / "Weather" / "openweather"
    lib.mkdir(parents=True)
    fns = [_fn("current"), _fn("current"), _fn("current", "other"), {"no": "name"}]
    (lib / "config_gpt4.json").write_text(json.dumps(fns), encoding="utf-8")
    data = tmp_path / "te" / "Test_Data"
    data.mkdir()
    queries = [
        {
            "query": "Weather in Oslo?",
            "path": "ToolEyes/Tool_Library/Weather/openweather",
            "scenario": "IS",
        },
        {"query": "Unknown", "path": "ToolEyes/Tool_Library/Nope/nope", "scenario": "IS"},
    ]
    (data / "scenario_data_raw.json").write_text(json.dumps(queries), encoding="utf-8")
    summary = import_tooleyes(tmp_path / "te", tmp_path / "suite")
    suite = load_suite(tmp_path / "suite")
    assert [a.name for a in suite.tools["openweather"].apis] == ["current", "current_2"]
    assert suite.tools["openweather"].category == "Weather"
    (task,) = suite.tasks
    assert task.group == "IS" and {r.api for r in task.tools} == {"current", "current_2"}
    assert len(summary.skipped) == 3  # the exact repeat, the nameless function, the unknown path


def test_real_tool_library(shared_data: Path, tmp_path: Path) -> None:
    summary = import_tooleyes(shared_data / "tooleyes", tmp_path / "tooleyes")
    assert summary.read["functions"] == 758
    suite = load_suite(tmp_path / "tooleyes")
    assert len(suite.tools) == 95
    # one of the 758 schemas repeats another exactly; two reuse a name for another function
    assert len(suite.apis) == 757
    assert len(suite.tasks) == 382
    assert asyncio.run(call_every_api(suite)) == {"miss": 757}


def _library(root: Path, queries: list[dict] | None) -> None:
    lib = root / "Tool_Library" / "Weather" / "openweather"
    lib.mkdir(parents=True)
    (lib / "config_gpt4.json").write_text(json.dumps([_fn("current")]), encoding="utf-8")
    if queries is not None:
        (root / "Test_Data").mkdir()
        (root / "Test_Data" / "scenario_data_raw.json").write_text(json.dumps(queries))


def test_the_tool_library_folder_finds_the_queries_beside_it(tmp_path: Path) -> None:
    query = {"query": "Weather?", "path": "Tool_Library/Weather/openweather", "scenario": "IS"}
    _library(tmp_path / "te", [query])
    summary = import_tooleyes(tmp_path / "te" / "Tool_Library", tmp_path / "suite")
    assert summary.written["tasks"] == 1 and len(load_suite(tmp_path / "suite").tasks) == 1


def test_an_import_without_tasks_is_an_error_and_writes_nothing(tmp_path: Path) -> None:
    _library(tmp_path / "alone", None)
    with pytest.raises(SandboxError, match="Test_Data/scenario_data_raw.json"):
        import_tooleyes(tmp_path / "alone" / "Tool_Library", tmp_path / "s1")
    _library(tmp_path / "te", [{"query": "Q", "path": "Tool_Library/Nope/nope"}])
    with pytest.raises(SandboxError, match="no usable query.*unknown tool"):
        import_tooleyes(tmp_path / "te", tmp_path / "s2")
    assert not (tmp_path / "s1").exists() and not (tmp_path / "s2").exists()
