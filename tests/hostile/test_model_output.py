"""Hostile model output: tool-call arguments no tool could take are the model's malformed call,
answered with an error observation; the episode goes on and is stored (issue item 14)."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.model import ToolCall, Turn
from agents.react import ReActAgent
from agents.toolenv import Observation
from agents.trajectory import Trajectory

ODD = [
    '{"n": NaN}',
    '{"n": Infinity}',
    '{"n": -Infinity}',
    '{"s": "\\ud800"}',
    '{"n": ' + "9" * 10000 + "}",
    '{"a": ' + "[" * 1000 + "]" * 1000 + "}",
    "[1, 2, 3]",
    '"just text"',
    "null",
    "{" * 100000,
]


class OddModel:
    """Calls ``lookup`` with the given argument text once, then finishes."""

    name = "odd"

    def __init__(self, arguments: str) -> None:
        self.arguments = arguments

    async def complete(self, messages, tools, params=None) -> Turn:
        if any(m.get("role") == "tool" for m in messages):
            args = json.dumps({"return_type": "give_answer", "final_answer": "done"})
            return Turn(tool_calls=[ToolCall(id="f", name="Finish", arguments=args)])
        return Turn(tool_calls=[ToolCall(id="c", name="lookup", arguments=self.arguments)])


class Env:
    def __init__(self) -> None:
        self.calls: list[dict] = []

    @property
    def functions(self) -> list[dict]:
        schema = {"type": "object", "properties": {}}
        return [{"type": "function", "function": {"name": "lookup", "parameters": schema}}]

    async def call(self, name: str, args: dict) -> Observation:
        self.calls.append(args)
        return Observation(ok=True, content='{"error": "", "response": "ok"}')


async def _episode(arguments: str) -> tuple[Trajectory, Env]:
    env = Env()
    traj = await ReActAgent().run(
        model=OddModel(arguments),
        env=env,
        query="q",
        budget=Budget(max_model_calls=5),
        episode=EpisodeMeta(scenario_id="t"),
    )
    return traj, env


@pytest.mark.parametrize("arguments", ODD, ids=[a[:20] for a in ODD])
async def test_14_odd_arguments_are_the_models_malformed_call(arguments: str) -> None:
    traj, env = await _episode(arguments)
    assert env.calls == []  # never sent to the tools
    first = traj.nodes[0].calls[0]
    assert first.observation is not None and first.observation.provenance == "invalid"
    assert traj.status.value == "answered"  # the episode went on
    line = traj.to_json_line()  # and it is stored: one line of valid UTF-8 JSON
    line.encode("utf-8")
    assert Trajectory.model_validate_json(line).nodes[0].calls[0].arguments == arguments


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.recursive(
        st.none() | st.booleans() | st.floats() | st.integers() | st.text(),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
        max_leaves=30,
    )
)
async def test_14_any_json_ish_arguments_never_crash_an_episode(value: object) -> None:
    try:
        arguments = json.dumps(value)
    except ValueError:
        arguments = repr(value)
    traj, _ = await _episode(arguments)
    assert traj.status.value == "answered"
    Trajectory.model_validate_json(traj.to_json_line())
