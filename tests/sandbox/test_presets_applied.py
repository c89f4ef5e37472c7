"""A run's preset reaches its model and its tools: ToolBench's request parameters and message
shape for a remote model (explicit values win, offline models are left alone), and ToolBench's
dispatch, ASCII observations and name lists for the tool environments of any suite."""

from __future__ import annotations

from pathlib import Path

from harness_suite import write_suite

from mock_tools import load_suite
from sandbox.models import resolve_model
from sandbox.models.preset import with_preset
from sandbox.store import RunConfig
from sandbox.tool_envs import open_tool_envs
from sandbox.tool_envs.http import offered_parameters


def test_a_remote_model_gets_toolbenchs_request_and_message_shape() -> None:
    spec = resolve_model("openai:m@http://127.0.0.1:9/v1")
    got = with_preset(spec, "toolbench")
    assert got.params == {"max_tokens": 1024, "frequency_penalty": 0, "presence_penalty": 0}
    assert got.tool_calls == "toolbench" and "temperature" not in got.params
    assert with_preset(spec, None) is spec


def test_values_the_model_sets_win_and_offline_models_are_left_alone() -> None:
    spec = resolve_model("openai:m@http://127.0.0.1:9/v1").model_copy(
        update={"params": {"max_tokens": 64, "temperature": 0.2}}
    )
    got = with_preset(spec, "stabletoolbench")
    assert got.params["max_tokens"] == 64 and got.params["temperature"] == 0.2
    assert got.params["presence_penalty"] == 0
    text = spec.model_copy(update={"tool_calls": "text"})
    assert with_preset(text, "toolbench").tool_calls == "text"  # the adapter keeps its prompting
    offline = resolve_model("noisy-reference:0.3")
    assert with_preset(offline, "toolbench") is offline


async def test_the_preset_sets_the_tools_on_any_suite(tmp_path: Path) -> None:
    suite = load_suite(write_suite(tmp_path / "suite"))
    task = suite.tasks[0]
    for preset, dispatch, ascii_only in [
        (None, "exact", False),
        ("toolbench", "toolbench_suffix", True),
    ]:
        config = RunConfig(suite=str(suite.path), preset=preset)
        async with open_tool_envs(config, suite) as envs:
            env = envs.for_episode(task, session="s")
            assert (env.dispatch, env.ascii_observations) == (dispatch, ascii_only)


def test_stabletoolbench_starts_the_name_lists_of_a_toolbench_schema_with_empty_names() -> None:
    schema = {
        "type": "object",
        "properties": {"q": {"type": "string", "description": ""}},
        "required": ["q"],
        "optional": [],
        "x-toolbench-names": True,
    }
    plain = {k: v for k, v in schema.items() if k != "x-toolbench-names"}
    assert offered_parameters(schema, "toolbench") == plain
    assert offered_parameters(schema, "stabletoolbench") == {
        **plain,
        "required": ["", "q"],
        "optional": [""],
    }
    own = {"type": "object", "properties": {}, "required": []}
    assert offered_parameters(own, "stabletoolbench") is own  # not a ToolBench schema
