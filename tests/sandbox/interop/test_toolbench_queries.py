from __future__ import annotations

import json
from pathlib import Path

import pytest
from appcheck import call_every_api

from mock_tools.names import NameResolver
from mock_tools.suite import load_suite
from sandbox.interop.toolbench_functions import toolbench_function, toolbench_parameters
from sandbox.interop.toolbench_queries import import_queries

QUERY = {
    "query": "Convert 5 USD to EUR and tell me the weather in Paris.",
    "query_id": 7,
    "api_list": [
        {
            "category_name": "Finance",
            "tool_name": "Currency Converter_v2",
            "api_name": "Convert",
            "api_description": "Converts money.",
            "required_parameters": [
                {"name": "amount", "type": "NUMBER", "description": "", "default": "5"},
                {"name": "from", "type": "STRING", "description": "ISO code", "default": "USD"},
            ],
            "optional_parameters": [
                {"name": "day", "type": "DATE (YYYY-MM-DD)", "description": "", "default": ""},
                {"name": "round", "type": "BOOLEAN", "description": "", "default": "true"},
            ],
            "method": "GET",
            "template_response": {"result": "float"},
        },
        {
            "category_name": "Financial",
            "tool_name": "Currency Converter_v2",
            "api_name": "Convert",
            "api_description": "Another tool with the same name.",
            "required_parameters": [],
            "optional_parameters": [],
            "method": "GET",
        },
        {"category_name": "Weather", "tool_name": "Weather", "api_name": ""},
    ],
    "relevant APIs": [["Currency Converter_v2", "Convert"]],
}


def test_parameters_are_offered_as_toolbench_offers_them() -> None:
    """Types NUMBER/STRING/BOOLEAN -> integer/string/boolean, anything else string; names
    standardised with is_ before reserved words; defaults as example_value unless empty;
    descriptions cut at 256 characters; required first, then optional."""
    params = toolbench_parameters(
        [
            {"name": "ID", "type": "NUMBER", "description": "x" * 300, "default": 5},
            {"name": "driverId", "type": "ENUM", "description": "d", "default": ""},
        ],
        [
            {"name": "longUrl", "type": "BOOLEAN", "description": "", "default": "true"},
            {"name": "from", "type": "DATE (YYYY-MM-DD)", "description": "", "default": 0},
        ],
    )
    assert params == {
        "type": "object",
        "properties": {
            "is_id": {"type": "integer", "description": "x" * 256, "example_value": 5},
            "driverid": {"type": "string", "description": "d"},
            "longurl": {"type": "boolean", "description": "", "example_value": "true"},
            "is_from": {"type": "string", "description": "", "example_value": 0},
        },
        "required": ["is_id", "driverid"],
        "optional": ["longurl", "is_from"],
    }


def test_optional_parameters_are_offered_only_next_to_required_ones() -> None:
    """ToolBench's quirk: an API whose parameters are all optional is offered none."""
    only_optional = [{"name": "q", "type": "STRING", "description": "", "default": "a"}]
    assert toolbench_parameters([], only_optional) == {
        "type": "object",
        "properties": {},
        "required": [],
        "optional": [],
    }


def test_function_name_and_description_as_toolbench_builds_them() -> None:
    """<api>_for_<tool> cut to its last 64 characters; the description prefixed with the tool
    and, inside ToolBench's quotes, the API description with the API name replaced by the
    function name, cut at 256 characters."""
    entry = {
        "tool_name": "Weather API",
        "api_name": "Get Weather",
        "api_description": "  Get Weather now. " + "y" * 300,
    }
    fn = toolbench_function(entry)
    assert fn["name"] == "get_weather_for_weather_api"
    text = ("Get Weather now. " + "y" * 300).replace("Get Weather", fn["name"])[:256]
    assert fn["description"] == (
        'This is the subfunction for tool "weather_api", you can use this tool.'
        f'The description of this function is: "{text}"'
    )
    bare = toolbench_function({"tool_name": "t" * 60, "api_name": "ID", "api_description": " "})
    assert bare["name"] == f"is_id_for_{'t' * 60}"[-64:]
    assert (
        bare["description"]
        == f'This is the subfunction for tool "{"t" * 60}", you can use this tool.'
    )


def test_import_writes_a_suite_that_loads(tmp_path: Path) -> None:
    src = tmp_path / "G2_category.json"
    src.write_text(json.dumps([QUERY, {"query": "no id"}]), encoding="utf-8")
    summary = import_queries([src], tmp_path / "suite")
    suite = load_suite(tmp_path / "suite")
    assert summary.read == {"files": 1, "queries": 2}
    assert summary.written["tasks"] == 1 and summary.written["apis"] == 2
    reasons = [s.reason for s in summary.skipped]
    assert any(r.startswith("malformed api") for r in reasons)
    assert any(r.startswith("malformed: query") for r in reasons)
    (task,) = suite.tasks
    assert task.id == "G2_category-7" and task.group == "G2"
    assert "toolbench" in task.tags and task.solvable
    # one tool name in two categories becomes two tools, each qualified by its category
    assert set(suite.tools) == {
        "Currency Converter_v2 (Finance)",
        "Currency Converter_v2 (Financial)",
    }
    assert task.reference.apis() == [("Currency Converter_v2 (Finance)", "Convert")]
    api = suite.api("Currency Converter_v2 (Finance)", "Convert")
    assert api is not None and api.parameters["required"] == ["amount", "is_from"]
    assert api.parameters["optional"] == ["day", "round"]
    assert "default" not in api.parameters["properties"]["is_from"]
    assert api.function == "convert_for_currency_converter_v2"
    # the same ToolBench function name in both categories: the category tells them apart
    resolver = NameResolver.for_apis(suite.apis, {t.name: t.category for t in suite.tools.values()})
    assert resolver.resolve_call("currency_converter_v2", "convert", "Financial") == (
        "Currency Converter_v2 (Financial)",
        "Convert",
    )
    assert resolver.resolve_call("currency_converter_v2_for_Finance", "convert", "Finance") == (
        "Currency Converter_v2 (Finance)",
        "Convert",
    )
    assert suite.meta.origin == "toolbench"
    assert suite.meta.dispatch == "toolbench_suffix" and suite.meta.ascii_observations


def test_all_stabletoolbench_queries(shared_data: Path, tmp_path: Path) -> None:
    files = sorted(
        (shared_data / "stabletoolbench/solvable_queries/test_instruction").glob("*.json")
    )
    assert len(files) == 6
    summary = import_queries(files, tmp_path / "stb")
    assert summary.skipped == []
    suite = load_suite(tmp_path / "stb")
    assert len(suite.tasks) == 765
    assert len(suite.tools) == 814
    assert len(suite.apis) == 2490
    groups = {t.group for t in suite.tasks}
    assert groups == {"G1", "G2", "G3"}
    for task in suite.tasks:
        assert all((ref.tool, ref.api) in suite.apis for ref in task.tools)
        assert task.reference.relevant_apis
    outcomes = pytest.importorskip("asyncio").run(call_every_api(suite))
    assert outcomes == {"miss": 2490}
