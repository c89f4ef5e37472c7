"""The pieces of the MCP tool env that need no server: names, tasks, results, targets, config.

What it protects: every listed tool keeps its exact name as the function agents see (split back into
tool and API when it has ToolBench's form, explicit otherwise); a run's tasks are offered the
server's matching tools (all of them when none match) and keep a reference only when every step is
on the server; whether a tool writes comes from its annotations' hints; tool results of any shape
become the right ``Response``; bad ``--mcp-server`` values and flag combinations are clear errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from mcp.types import CallToolResult, ImageContent, TextContent, Tool, ToolAnnotations
from pydantic import ValidationError

from mock_tools import Suite, Task
from mock_tools.models import ApiSpec, SuiteMeta
from sandbox.errors import ConfigError
from sandbox.store import RunConfig
from sandbox.tool_envs.http import tool_functions
from sandbox.tool_envs.mcp import McpToolEnvs
from sandbox.tool_envs.mcp_catalog import ServerCatalog
from sandbox.tool_envs.mcp_client import McpTarget, response_of

OBJECT = {"type": "object", "properties": {"q": {"type": "string"}}}


def _tool(name: str, **meta: str) -> Tool:
    return Tool(name=name, description=f"doc of {name}", input_schema=OBJECT, meta=meta or None)


def _catalog() -> ServerCatalog:
    return ServerCatalog.from_tools(
        "My Server",
        [
            _tool("current_for_weather"),
            _tool(
                "search_for_flights",
                **{"agent-sandbox/tool": "Sky Flights", "agent-sandbox/api": "Search"},
            ),
            _tool("Get-Weather"),
            _tool("read_file"),
            _tool("current_for_weather"),  # listed twice: kept once
        ],
    )


def test_every_tool_keeps_its_name_as_the_function_agents_see() -> None:
    catalog = _catalog()
    assert catalog.by_name == {
        "current_for_weather": ("weather", "current"),
        "search_for_flights": ("Sky Flights", "Search"),
        "Get-Weather": ("my_server", "Get-Weather"),
        "read_file": ("my_server", "read_file"),
    }
    task = Task(id="t", query="q", tools=[{"tool": t, "api": a} for t, a in catalog.apis])
    functions, targets = tool_functions(task, catalog.apis)
    assert set(targets) == set(catalog.by_name)
    assert {f["function"]["name"] for f in functions} == set(catalog.by_name)
    assert catalog.apis[("weather", "current")].function is None  # ToolBench's form, no override
    assert catalog.apis[("my_server", "Get-Weather")].function == "Get-Weather"
    assert catalog.apis[("Sky Flights", "Search")].function == "search_for_flights"


def test_a_tool_without_an_object_schema_is_skipped() -> None:
    bad = Tool(name="odd", input_schema={"type": "array"})
    catalog = ServerCatalog.from_tools("s", [bad, _tool("fine")])
    assert catalog.skipped == ["odd"] and list(catalog.by_name) == ["fine"]


def test_tasks_are_offered_the_matching_tools_or_all_of_them() -> None:
    catalog = _catalog()
    source = {("weather", "current"): ApiSpec(name="current")}
    ref = {"tool": "weather", "api": "current", "args": {"q": "Oslo"}}
    matched = catalog.task(
        Task(
            id="a",
            query="weather?",
            tools=[{"tool": "weather", "api": "current"}, {"tool": "maps", "api": "route"}],
            reference={"steps": [ref], "answer": "snow"},
        ),
        source,
    )
    assert [(r.tool, r.api) for r in matched.tools] == [("weather", "current")]
    assert matched.reference.steps[0].args == {"q": "Oslo"} and matched.reference.answer == "snow"
    offstage = catalog.task(
        Task(
            id="b",
            query="route?",
            tools=[{"tool": "maps", "api": "route"}],
            reference={"steps": [{"tool": "maps", "api": "route"}], "answer": "left"},
        ),
        source,
    )
    assert len(offstage.tools) == len(catalog.apis)  # nothing matched: every tool
    assert offstage.reference.steps == [] and offstage.reference.answer == "left"
    bare = catalog.task(Task(id="c", query="anything"), {})
    assert len(bare.tools) == len(catalog.apis)


def _result(*content: Any, structured: Any = None, error: bool = False) -> CallToolResult:
    return CallToolResult(content=list(content), structured_content=structured, is_error=error)


def _text(value: str) -> TextContent:
    return TextContent(type="text", text=value)


def test_tool_results_of_every_shape_become_responses() -> None:
    native = {"ok": False, "body": None, "error": "no recording", "provenance": "miss"}
    assert response_of(_result(_text("x"), structured=native, error=True)).error == "no recording"
    assert response_of(_result(_text('{"a": 1}'))).body == {"a": 1}
    assert response_of(_result(_text("plain words"))).body == "plain words"
    assert response_of(_result(_text("1"), structured={"sum": 1})).body == {"sum": 1}
    failed = response_of(_result(_text("it broke"), error=True))
    assert not failed.ok and failed.error == "it broke"
    assert response_of(_result(error=True)).error == "the tool reported an error"
    image = ImageContent(type="image", data="AAAA", mime_type="image/png")
    both = response_of(_result(_text("[1]"), image)).body
    assert both[0] == [1] and both[1]["mimeType"] == "image/png"
    assert response_of(_result()).body == ""


def test_targets_are_urls_or_stdio_commands() -> None:
    assert McpTarget.parse("http://127.0.0.1:8765/mcp").url == "http://127.0.0.1:8765/mcp"
    target = McpTarget.parse("stdio:my-server --flag 'two words'")
    assert target.command == ("my-server", "--flag", "two words")
    assert target.describe() == "stdio:my-server --flag 'two words'"
    for bad in ("stdio:", "stdio:'unclosed", "ws://x"):
        with pytest.raises(ConfigError):
            McpTarget.parse(bad)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"mcp_server": "ftp://x"}, "not an MCP server"),
        ({"mcp_server": "http://x/mcp", "tools_url": "http://y"}, "not both"),
        ({"record_into": "out"}, "add --mcp-server"),
        ({"ray_address": "10.0.0.1:6379"}, "needs --executor ray"),
        ({"mcp_server": "http://x/mcp", "record_into": "o", "executor": "ray"}, "--executor local"),
    ],
)
def test_run_config_rejects_what_cannot_work(fields: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        RunConfig(**fields)


def test_offline_config_reads_the_recorded_suite() -> None:
    live = RunConfig(tools={"mcp_server": "http://x/mcp", "record_into": "rec"}, suite="tasks.yaml")
    assert live.offline().suite == "rec" and live.offline().tools.mcp_server is None
    unrecorded = RunConfig(tools={"mcp_server": "http://x/mcp"})
    assert unrecorded.offline() is unrecorded


@pytest.mark.parametrize(
    ("hints", "read_only"),
    [
        (None, None),  # no annotations: nothing said
        (ToolAnnotations(title="Look"), None),  # annotations without a hint
        (ToolAnnotations(read_only_hint=True), True),
        (ToolAnnotations(read_only_hint=False), False),
        (ToolAnnotations(destructive_hint=False), False),  # a hint of tools that write
        (ToolAnnotations(idempotent_hint=True), False),
        (ToolAnnotations(read_only_hint=True, destructive_hint=True), True),  # readOnly wins
        (ToolAnnotations(open_world_hint=True), None),  # says nothing of writing
    ],
)
def test_whether_a_tool_writes_comes_from_its_hints(
    hints: ToolAnnotations | None, read_only: bool | None
) -> None:
    tool = Tool(name="t", input_schema=OBJECT, annotations=hints)
    catalog = ServerCatalog.from_tools("srv", [tool])
    assert catalog.apis[("srv", "t")].read_only is read_only


def test_which_tools_write_is_the_recorded_suites_say_else_the_runs(tmp_path: Path) -> None:
    def kinds(record_into: Path | None, **given: Any) -> SuiteMeta:
        tools: dict[str, Any] = {"mcp_server": "http://x/mcp"}
        if record_into is not None:
            tools["record_into"] = str(record_into)
        source = Suite(meta=SuiteMeta(name="src", **given), tools={}, tasks=[], recordings=[])
        return McpToolEnvs(RunConfig(tools=tools, suite="tasks.yaml"), source)._kinds()

    assert kinds(None, writes=["add"]).writes == ["add"]
    new = tmp_path / "new"
    assert kinds(new, reads=["list"]).reads == ["list"]  # a new suite takes the run's
    rec = tmp_path / "rec"
    rec.mkdir()
    (rec / "suite.yaml").write_text(yaml.safe_dump({"name": "rec", "writes": ["add"]}))
    assert kinds(rec).writes == ["add"]  # the recorded suite replays with its own
    assert kinds(rec, writes=["add"]).writes == ["add"]
    with pytest.raises(ConfigError, match="--suite says writes \\['pop'\\] .* make them agree"):
        kinds(rec, writes=["pop"])
    (rec / "suite.yaml").write_text("name: [")
    with pytest.raises(ConfigError, match="cannot record into"):
        kinds(rec)
