"""Configs written before ``RunConfig`` had sections read into them: each renamed flat key to its
setting, every other flat key to the one section that has it, plain values of a section to its
name, the oldest agent options and ``fork`` to today's form; what cannot be placed is left for
validation to name, and one setting given twice with two values is refused."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from sandbox.store.config import BudgetConfig, RunConfig
from sandbox.store.config_upgrade import upgrade_flat
from sandbox.store.defaults import DEFAULT_MODEL


def test_each_renamed_flat_key_lands_on_its_setting() -> None:
    flat = {
        "agent": "dfsdt",
        "agent_options": {"width": 2},
        "model": "m",
        "model_options": {"rate": 0.1},
        "model_cache": "c.sqlite",
        "executor": "ray",
        "tools_url": "http://t",
        "tools_replay": "runs/r",
        "seed": 3,
    }
    assert upgrade_flat(flat, RunConfig) == {
        "agent": {"name": "dfsdt", "options": {"width": 2}},
        "model": {"name": "m", "options": {"rate": 0.1}, "cache": "c.sqlite"},
        "executor": {"name": "ray"},
        "tools": {"url": "http://t", "replay": "runs/r"},
        "seed": 3,
    }


def test_other_flat_keys_go_to_the_one_section_that_has_them_beside_what_it_holds() -> None:
    data = {"budget": {"max_tokens": 5}, "max_depth": 3, "out": "o", "concurrency": 2}
    assert upgrade_flat(data, RunConfig) == {
        "budget": {"max_tokens": 5, "max_depth": 3},
        "output": {"out": "o"},
        "executor": {"concurrency": 2},
    }
    given = BudgetConfig(max_tokens=5, max_depth=3)  # a section given as a model
    assert upgrade_flat({"budget": given, "max_depth": 3}, RunConfig) == {
        "budget": given.model_dump()
    }
    with pytest.raises(ValueError, match="budget.max_cost is given twice"):
        upgrade_flat({"budget": given, "max_cost": 1.0}, RunConfig)  # its max_cost is None


def test_what_no_single_section_holds_is_left_for_validation_to_name() -> None:
    # ``options`` is in three sections, ``budget: 3`` is no mapping and no name: both stay
    assert upgrade_flat({"options": {}, "budget": 3, "nope": 1}, RunConfig) == {
        "options": {},
        "budget": 3,
        "nope": 1,
    }
    assert upgrade_flat(["not", "a", "mapping"], RunConfig) == ["not", "a", "mapping"]

    class NoTools(BaseModel):
        tools: str = ""
        agent: int = 0

    # a model whose ``tools`` and ``agent`` are plain fields: no renaming into them
    assert upgrade_flat({"tools_url": "u", "agent": 1}, NoTools) == {"tools_url": "u", "agent": 1}
    assert upgrade_flat({"agent_options": {"w": 1}}, NoTools) == {"agent_options": {"w": 1}}


def test_a_setting_given_flat_and_in_its_section_must_agree() -> None:
    data: dict[str, Any] = {"model": {"name": "a", "options": {"x": 2}}, "model_options": {"x": 1}}
    with pytest.raises(ValueError) as caught:
        upgrade_flat(data, RunConfig)
    assert str(caught.value) == "model.options is given twice, in its section and as a flat field"
    data["model_options"] = {"x": 2}
    assert upgrade_flat(data, RunConfig) == {"model": {"name": "a", "options": {"x": 2}}}


def test_the_oldest_agent_options_and_fork_read_as_todays() -> None:
    """Top-level ``width``, ``depth_unit`` and ``max_observation_chars`` are agent options (an
    option given in ``agent_options`` too keeps that value; a null one is dropped); ``fork``
    is the model ``fork`` whose ``then`` is the model the run named (else the default)."""
    old = {"width": 2, "depth_unit": "turns", "max_observation_chars": None}
    assert upgrade_flat(old, RunConfig) == {
        "agent": {"options": {"width": 2, "depth_unit": "turns"}}
    }
    both = {"width": 2, "max_observation_chars": 50, "agent_options": {"width": 5}}
    assert upgrade_flat(both, RunConfig)["agent"]["options"] == {
        "width": 5,
        "max_observation_chars": 50,
    }
    assert upgrade_flat({"width": None}, RunConfig) == {}
    fork = {"fork": {"run": "r", "task": "t"}, "model": "reference"}
    assert upgrade_flat(fork, RunConfig) == {
        "model": {"name": "fork", "options": {"run": "r", "task": "t", "then": "reference"}}
    }
    assert upgrade_flat({"fork": {"run": "r"}}, RunConfig)["model"]["options"]["then"] == (
        DEFAULT_MODEL
    )
    assert upgrade_flat({"fork": None, "seed": 1}, RunConfig) == {"seed": 1}


def test_a_top_level_setting_stays_even_when_a_section_has_a_field_of_its_name() -> None:
    class Section(BaseModel):
        x: int = 0

    class Model(BaseModel):
        x: int = 0
        section: Section = Section()

    assert upgrade_flat({"x": 1}, Model) == {"x": 1}
    assert upgrade_flat({"section": {"x": 2}, "x": 1}, Model) == {"section": {"x": 2}, "x": 1}
