"""Presets: named sets of settings, each value with the place it comes from.

A preset fills in what a run did not set: an option applies to the strategies whose options
class has it, a budget to the run's ``Budget``; a value given explicitly always wins
(``apply_preset``). Beyond the agent, a preset may say how the model is asked (``request``:
parameters sent with every model call where the model's own settings set none; ``messages``:
the shape of the history, ``agents.models.message_shapes``) and how the tools are offered and
answered (``tools``, see ``TOOL_SETTINGS``); the harness applies those to remote models and to
the tool environments. Presets live in one registry, ``PRESETS``; a new one is a ``Preset`` and one
``register_preset`` call. The built-in ``toolbench`` preset holds the values of ToolBench's own
inference code (OpenBMB/ToolBench ``toolbench/inference``, ``qa_pipeline.py``), and
``stabletoolbench`` those of StableToolBench's shipped script (``qa_pipeline_multithread.py`` run by
``inference_chatgpt_pipeline_virtual.sh``), so a run asks and searches as they did (docs/agents.md
tables every value with its source). Imports ``agents.budget``, ``agents.registry``,
``agents.strategies``, ``agents.toolenv`` and ``agents.models.message_shapes``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from agents.budget import Budget
from agents.models.message_shapes import MESSAGE_SHAPES, MessageShape
from agents.registry import Registry
from agents.strategies import options_for
from agents.toolenv import DISPATCH_RULES, FINISH_RULES

__all__ = [
    "PRESETS",
    "STABLETOOLBENCH",
    "TOOLBENCH",
    "TOOL_SETTINGS",
    "Preset",
    "Setting",
    "apply_preset",
    "preset_values",
    "register_preset",
]

NameLists = Literal["toolbench", "stabletoolbench"]
FunctionNames = Literal["unique", "toolbench"]
TOOL_SETTINGS: Mapping[str, tuple[Any, ...]] = {
    "dispatch": DISPATCH_RULES,
    "ascii_observations": (True, False),
    "name_lists": get_args(NameLists),
    "function_names": get_args(FunctionNames),
    "finish_rule": FINISH_RULES,
}
"""What a preset may set about the tools, and the values each takes: the dispatch rule, whether
observations escape non-ASCII characters, how a ToolBench schema's ``required`` and
``optional`` lists are offered (``stabletoolbench``: each starts with an empty name, as
StableToolBench's client writes them), how APIs whose function names collide are offered
(``unique``: the later ones get ``_2``, ``_3``...; ``toolbench``: every API under its own
name, repeats included, a repeated name reaching what ToolBench's client reaches) and the finish
rule (``agents.toolenv.FinishRule``)."""


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
    request: Mapping[str, Setting] = field(default_factory=dict)
    """Parameters of every model request (``max_tokens``...), where the model sets none."""
    messages: Setting | None = None
    """The shape of the history sent to a chat endpoint (a ``MessageShape``)."""

    @property
    def message_shape(self) -> MessageShape | None:
        return self.messages.value if self.messages is not None else None

    tools: Mapping[str, Setting] = field(default_factory=dict)
    """Tool settings (``TOOL_SETTINGS``); they replace the suite's own."""

    def __post_init__(self) -> None:
        unknown = sorted(set(self.budget) - set(Budget.model_fields))
        if unknown:
            raise ValueError(f"preset {self.name!r}: {', '.join(unknown)} are not budget fields")
        for key, setting in self.tools.items():
            if setting.value not in TOOL_SETTINGS.get(key, ()):
                what = f"tools.{key} = {setting.value!r}"
                raise ValueError(f"preset {self.name!r}: {what} is unknown")
        if self.messages is not None and self.messages.value not in MESSAGE_SHAPES:
            raise ValueError(f"preset {self.name!r}: messages {self.messages.value!r} is unknown")


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


def preset_values(name: str | None, section: Literal["request", "tools"]) -> dict[str, Any]:
    """The values of one section of a preset (none without a preset)."""
    if name is None:
        return {}
    settings: Mapping[str, Setting] = getattr(PRESETS.get(name), section)
    return {k: s.value for k, s in settings.items()}


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
                "toolbench",
                "DFS.py DFS: DIVERSITY_PROMPT is added when the node already has children; its "
                "candidates are json.dumps(js_list, indent=2) (ASCII-escaped), each with "
                '"mento-carlo-action-value" (tree_node.compute_weight, always 0.0)',
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
        request={
            "max_tokens": Setting(
                1024, "chatgpt_function_model.py chat_completion_request: max_tokens=1024"
            ),
            "frequency_penalty": Setting(
                0, "chatgpt_function_model.py chat_completion_request: frequency_penalty=0"
            ),
            "presence_penalty": Setting(
                0, "chatgpt_function_model.py chat_completion_request: presence_penalty=0"
            ),
        },
        messages=Setting(
            "toolbench",
            "DFS.py / single_chain.py: a tool result is {role, name, content, tool_call_id}; the "
            "assistant message goes back as the API returned it (content null beside calls)",
        ),
        tools={
            "dispatch": Setting(
                "toolbench_suffix",
                "rapidapi.py rapidapi_wrapper._step: the first function whose name "
                "endswith(action_name)",
            ),
            "ascii_observations": Setting(
                True, "rapidapi.py rapidapi_wrapper._step: the observation is json.dumps(response)"
            ),
            "name_lists": Setting(
                "toolbench",
                'rapidapi.py api_json_to_openai_json: "required": [], "optional": []',
            ),
            "function_names": Setting(
                "toolbench",
                "rapidapi.py rapidapi_wrapper.__init__: every API's function is appended, a name "
                "cut to the same last 64 characters again; api_name_reflect keeps the last API "
                "of a name, _step sends the first function's tool with it",
            ),
            "finish_rule": Setting(
                "toolbench",
                "DFS.py DFS / single_chain.py do_chain: every call of a turn runs after a "
                "Finish(give_answer), and the chain's terminal node, whose description "
                "answer_generation records as final_answer, is the turn's last call",
            ),
        },
    )
)

STABLETOOLBENCH = register_preset(
    replace(
        TOOLBENCH,
        name="stabletoolbench",
        description="StableToolBench's shipped inference script "
        "(inference_chatgpt_pipeline_virtual.sh -> qa_pipeline_multithread.py).",
        budget={
            **TOOLBENCH.budget,
            "max_model_calls": Setting(
                200,
                "qa_pipeline_multithread.py --max_query_count (default 200), passed to "
                "rapidapi_multithread.py run_single_task",
            ),
            "max_depth": Setting(
                50,
                "qa_pipeline_multithread.py --single_chain_max_step (default 50; the script "
                "passes none), passed to rapidapi_multithread.py run_single_task",
            ),
        },
        options={
            **TOOLBENCH.options,
            "max_observation_chars": Setting(
                1024, "inference_chatgpt_pipeline_virtual.sh --max_observation_length 1024"
            ),
        },
        tools={
            **TOOLBENCH.tools,
            "name_lists": Setting(
                "stabletoolbench",
                'StableToolBench rapidapi.py api_json_to_openai_json: "required": [""], '
                '"optional": [""] before the names',
            ),
        },
    )
)
