"""Presets: ToolBench's values, each with its source, filling only what a run leaves unset."""

from __future__ import annotations

import pytest

from agents.budget import Budget
from agents.presets import PRESETS, STABLETOOLBENCH, TOOLBENCH, Preset, Setting, apply_preset
from agents.registry import UnknownName
from agents.strategies import resolve_strategy


def test_toolbench_preset_holds_toolbenchs_values_with_their_sources() -> None:
    options = {k: s.value for k, s in TOOLBENCH.options.items()}
    assert options == {
        "width": 2,
        "depth_unit": "toolbench_nodes",
        "depth_cut_backtrack": 1,
        "give_up_backtrack": 2,
        "diversity_prompt": "toolbench",
        "max_observation_chars": 1024,
        "on_model_error": "prune",
    }
    assert {k: s.value for k, s in TOOLBENCH.budget.items()} == {
        "max_model_calls": 200,
        "max_depth": 12,
    }
    assert {k: s.value for k, s in TOOLBENCH.request.items()} == {
        "max_tokens": 1024,
        "frequency_penalty": 0,
        "presence_penalty": 0,
    }
    assert TOOLBENCH.messages is not None and TOOLBENCH.messages.value == "toolbench"
    assert {k: s.value for k, s in TOOLBENCH.tools.items()} == {
        "dispatch": "toolbench_suffix",
        "ascii_observations": True,
        "name_lists": "toolbench",
        "function_names": "toolbench",
        "finish_rule": "toolbench",
    }
    settings = [*TOOLBENCH.options.values(), *TOOLBENCH.budget.values()]
    settings += [*TOOLBENCH.request.values(), TOOLBENCH.messages, *TOOLBENCH.tools.values()]
    for setting in settings:
        assert ".py" in setting.source  # every number names the file it was read from
    assert PRESETS.get("toolbench") is TOOLBENCH


def test_stabletoolbench_preset_is_toolbench_with_its_scripts_changes() -> None:
    """Depth 50 (single_chain_max_step of the multithread script), its observation limit, and
    StableToolBench's ``[""]`` name lists; everything else as ToolBench."""
    assert PRESETS.get("stabletoolbench") is STABLETOOLBENCH
    assert STABLETOOLBENCH.budget["max_depth"].value == 50
    assert STABLETOOLBENCH.budget["max_model_calls"].value == 200
    assert STABLETOOLBENCH.options["max_observation_chars"].value == 1024
    assert STABLETOOLBENCH.tools["name_lists"].value == "stabletoolbench"
    assert STABLETOOLBENCH.request == TOOLBENCH.request
    same = {k: s.value for k, s in STABLETOOLBENCH.options.items()}
    assert same == {k: s.value for k, s in TOOLBENCH.options.items()}
    for setting in [*STABLETOOLBENCH.budget.values(), *STABLETOOLBENCH.tools.values()]:
        assert ".py" in setting.source or ".sh" in setting.source


def test_apply_fills_only_what_was_not_given_and_only_options_the_strategy_takes() -> None:
    options, budget = apply_preset("toolbench", "dfsdt", {"width": 3}, {"max_depth": 20})
    assert options["width"] == 3 and options["depth_cut_backtrack"] == 1
    assert budget == {"max_model_calls": 200, "max_depth": 20}
    react, _ = apply_preset("toolbench", "react", {}, {})
    assert set(react) == {"depth_unit", "max_observation_chars"}
    at_n, _ = apply_preset("toolbench", "react@3", {}, {})
    assert at_n["on_model_error"] == "prune" and "width" not in at_n
    assert resolve_strategy("dfsdt", options).params["max_observation_chars"] == 1024
    with pytest.raises(UnknownName, match="known: .*toolbench"):
        apply_preset("nope", "dfsdt", {}, {})


def test_a_preset_names_only_budget_fields() -> None:
    assert set(TOOLBENCH.budget) <= set(Budget.model_fields)
    with pytest.raises(ValueError, match="not budget fields"):
        Preset("bad", "", budget={"max_widgets": Setting(1, "x.py")})
    with pytest.raises(ValueError, match="tools.dispatch = 'fuzzy' is unknown"):
        Preset("bad", "", tools={"dispatch": Setting("fuzzy", "x.py")})
