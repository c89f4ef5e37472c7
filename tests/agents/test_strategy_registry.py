"""The strategy registry: names, options validated by their options class, clear errors."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import Field

from agents.agent import BaseAgent
from agents.dfsdt import DFSDTAgent, DFSDTOptions
from agents.options import AgentOptions
from agents.react import ReActAgent
from agents.react_at_n import ReActAtN
from agents.strategies import (
    STRATEGIES,
    AgentOptionsError,
    UnknownAgent,
    build_agent,
    option_owners,
    register_strategy,
    resolve_strategy,
    strategy_entry,
)


def test_builtin_names_build_their_classes() -> None:
    assert isinstance(build_agent("react"), ReActAgent)
    dfsdt = build_agent("DFSDT", width=3)
    assert isinstance(dfsdt, DFSDTAgent) and dfsdt.params["width"] == 3
    at4 = resolve_strategy("react@4")
    assert at4.name == "react@4" and isinstance(at4.build(), ReActAtN)
    assert at4.params["n"] == 4
    assert resolve_strategy("react@n", {"n": 2}).name == "react@2"


def test_options_are_declared_once_on_a_shared_base() -> None:
    shared = set(AgentOptions.model_fields)
    assert shared == {"system_prompt", "max_observation_chars", "depth_unit"}
    for _, entry in STRATEGIES.items():
        assert issubclass(entry.options, AgentOptions)
        # a strategy adds fields; it never re-declares a shared one
        own = {n for n in entry.options.__annotations__ if not n.startswith("_")}
        assert not own & shared, entry.name
    assert set(DFSDTOptions.model_fields) - shared == {
        "width",
        "depth_cut_backtrack",
        "give_up_backtrack",
        "diversity_prompt",
        "on_model_error",
    }


@pytest.mark.parametrize(
    ("spec", "options", "message"),
    [
        ("bfs", {}, "known agents: react, dfsdt, react@<n>"),
        ("react@x", {}, "n: Input should be a valid integer"),
        ("react@0", {}, "n: Input should be greater than or equal to 1"),
        ("react", {"width": 2}, "'width' (taken by: dfsdt)"),
        ("react", {"colour": 2}, "'colour' (no strategy takes it)"),
        ("dfsdt", {"width": 0}, "width: Input should be greater than or equal to 1"),
        ("dfsdt", {"depth_unit": "metres"}, "depth_unit: Input should be 'turns'"),
    ],
)
def test_mistakes_are_clear(spec: str, options: dict[str, Any], message: str) -> None:
    with pytest.raises((UnknownAgent, AgentOptionsError)) as info:
        resolve_strategy(spec, options)
    assert message in str(info.value)


def test_option_owners() -> None:
    assert option_owners("width") == ["dfsdt"]
    assert option_owners("n") == ["react@<n>"]
    # the built-ins first; a strategy the harness registers (external) may follow them
    assert option_owners("max_observation_chars")[:3] == ["react", "dfsdt", "react@<n>"]


class _ToyOptions(AgentOptions):
    shout: bool = Field(default=False)


class _Toy(BaseAgent[_ToyOptions]):
    name = "toy-registry"
    Options = _ToyOptions

    async def run(self, **_: Any) -> Any:  # pragma: no cover - never run here
        raise NotImplementedError


def test_a_strategy_registers_with_one_call_and_leaves_no_trace() -> None:
    with STRATEGIES.registered("toy-registry", strategy_entry(_Toy)):
        agent = build_agent("toy-registry", shout=True)
        assert isinstance(agent, _Toy) and agent.params["shout"] is True
        assert option_owners("shout") == ["toy-registry"]
    assert "toy-registry" not in STRATEGIES
    with pytest.raises(UnknownAgent):
        resolve_strategy("toy-registry")


def test_registration_checks_the_options_class() -> None:
    class Plain:
        name = "plain"
        Options = dict

    with pytest.raises(TypeError, match="subclass AgentOptions"):
        register_strategy(Plain)
    assert "plain" not in STRATEGIES
