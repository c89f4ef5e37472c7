"""Presets: named sets of agent options and budgets, each value with the place it comes from.

A preset fills in what a run did not set: an option applies to the strategies whose options
class has it, a budget to the run's ``Budget``; a value given explicitly always wins
(``apply_preset``). Presets live in one registry, ``PRESETS``; a new one is a ``Preset`` and one
``register_preset`` call. The built-in ``toolbench`` preset holds the values of ToolBench's own
inference code (OpenBMB/ToolBench ``toolbench/inference``; StableToolBench keeps them), so a run
searches as ToolBench searched (docs/agents.md lists them). Imports ``agents.budget``,
``agents.registry`` and ``agents.strategies``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.budget import Budget
from agents.registry import Registry
from agents.strategies import options_for

__all__ = ["PRESETS", "TOOLBENCH", "Preset", "Setting", "apply_preset", "register_preset"]


@dataclass(frozen=True)
class Setting:
    """One value of a preset and where it comes from (file, function, what the code does)."""

    value: Any
    source: str


@dataclass(frozen=True)
class Preset:
    name: str
    description: str
    options: Mapping[str, Setting] = field(default_factory=dict)
    """Agent options (applied to the strategies that take them)."""
    budget: Mapping[str, Setting] = field(default_factory=dict)
    """``Budget`` fields."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.budget) - set(Budget.model_fields))
        if unknown:
            raise ValueError(f"preset {self.name!r}: {', '.join(unknown)} are not budget fields")


PRESETS: Registry[Preset] = Registry("preset")


def register_preset(preset: Preset, *, replace: bool = False) -> Preset:
    return PRESETS.register(preset.name, preset, replace=replace)


def apply_preset(
    name: str, agent: str, options: Mapping[str, Any], budget: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """``(options, budget)`` of a run of ``agent`` with the preset's values filled in where
    ``options`` and ``budget`` (what was set explicitly) have none. ``UnknownName`` for an
    unknown preset, ``UnknownAgent`` for an unknown agent."""
    preset = PRESETS.get(name)
    defaults = options_for(agent, {k: s.value for k, s in preset.options.items()})
    return (
        {**defaults, **options},
        {**{k: s.value for k, s in preset.budget.items()}, **budget},
    )


TOOLBENCH = register_preset(
    Preset(
        name="toolbench",
        description="ToolBench's DFSDT / CoT inference settings (toolbench/inference).",
        options={
            "width": Setting(
                2,
                "rapidapi.py method_converter: tree_beam_size from the method name's `_w<N>`; "
                "the shipped scripts (scripts/inference_*_pipeline.sh) run DFS_woFilter_w2",
            ),
            "depth_unit": Setting(
                "toolbench_nodes",
                "Tree.py tree_node.get_depth: each Thought, Action and Action Input node is a "
                "level",
            ),
            "depth_cut_backtrack": Setting(
                1, "DFS.py DFS: a node at single_chain_max_step that did not answer returns 1"
            ),
            "give_up_backtrack": Setting(
                2, "DFS.py DFS: prune_back_length = 2 (returned by a give-up node)"
            ),
            "diversity_prompt": Setting(
                True,
                "DFS.py DFS: DIVERSITY_PROMPT is added when the node already has children",
            ),
            "max_observation_chars": Setting(
                1024,
                "qa_pipeline.py --max_observation_length (default 1024); rapidapi.py "
                "rapidapi_wrapper.step cuts every observation there and appends '...'",
            ),
            "on_model_error": Setting(
                "prune",
                "chatgpt_function_model.py ChatGPTFunction.parse returns a failed call as text "
                "with error code -1; DFS.py prunes that node (returns 1) and goes on, "
                "single_chain.py ends that try",
            ),
        },
        budget={
            "max_model_calls": Setting(
                200,
                "rapidapi.py run_single_task: max_query_count=200 (DFS.py stops when the count "
                "of model calls reaches it, dropping that last call's output)",
            ),
            "max_depth": Setting(12, "rapidapi.py run_single_task: single_chain_max_step=12"),
        },
    )
)
