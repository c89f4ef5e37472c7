"""Presets: ToolBench's values, each with its source, filling only what a run leaves unset."""

from __future__ import annotations

import pytest

from agents.budget import Budget
from agents.presets import PRESETS, TOOLBENCH, Preset, Setting, apply_preset
from agents.registry import UnknownName
from agents.strategies import resolve_strategy


def test_toolbench_preset_holds_toolbenchs_values_with_their_sources() -> None:
    options = {k: s.value for k, s in TOOLBENCH.options.items()}
    assert options == {
        "width": 2,
        "depth_unit": "toolbench_nodes",
        "depth_cut_backtrack": 1,
        "give_up_backtrack": 2,
        "diversity_prompt": True,
        "max_observation_chars": 1024,
        "on_model_error": "prune",
    }
    assert {k: s.value for k, s in TOOLBENCH.budget.items()} == {
        "max_model_calls": 200,
        "max_depth": 12,
    }
    for setting in [*TOOLBENCH.options.values(), *TOOLBENCH.budget.values()]:
        assert ".py" in setting.source  # every number names the file it was read from
    assert PRESETS.get("toolbench") is TOOLBENCH


def test_apply_fills_only_what_was_not_given_and_only_options_the_strategy_takes() -> None:
    options, budget = apply_preset("toolbench", "dfsdt", {"width": 3}, {"max_depth": 20})
    assert options["width"] == 3 and options["depth_cut_backtrack"] == 1
    assert budget == {"max_model_calls": 200, "max_depth": 20}
    react, _ = apply_preset("toolbench", "react", {}, {})
    assert set(react) == {"depth_unit", "max_observation_chars"}
    at_n, _ = apply_preset("toolbench", "react@3", {}, {})
    assert at_n["on_model_error"] == "prune" and "width" not in at_n
    assert resolve_strategy("dfsdt", options).params["max_observation_chars"] == 1024
    with pytest.raises(UnknownName, match="known: toolbench"):
        apply_preset("nope", "dfsdt", {}, {})


def test_a_preset_names_only_budget_fields() -> None:
    assert set(TOOLBENCH.budget) <= set(Budget.model_fields)
    with pytest.raises(ValueError, match="not budget fields"):
        Preset("bad", "", budget={"max_widgets": Setting(1, "x.py")})
