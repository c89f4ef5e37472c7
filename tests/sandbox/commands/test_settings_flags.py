"""The flags of ``run`` and ``compare`` are made from the settings models: every setting has one,
the flags keep their names and defaults, and registry-backed help lists the registry's entries."""

from __future__ import annotations

import argparse
from typing import Any

from agents.react import ReActAgent
from agents.strategies import STRATEGIES, strategy_entry
from sandbox.commands import compare, run
from sandbox.commands.compare import NOT_FLAGS, CompareConfig
from sandbox.commands.settings_flags import registry_entries
from sandbox.store.config import RunConfig
from sandbox.store.setting import setting_fields

FLAGS_BEFORE = [
    "--suite",
    "--agent",
    "--model",
    "--seed",
    "--concurrency",
    "--trials",
    "--tasks",
    "--max-model-calls",
    "--max-tool-calls",
    "--max-tokens",
    "--max-seconds",
    "--max-cost",
    "--max-run-cost",
    "--max-depth",
    "--preset",
    "--model-cache",
    "--out",
    "--run-id",
    "--resume",
    "--tools-url",
    "--miss-policy",
    "--simulator",
    "--overlay",
    "--upstream-url",
    "--fault-rate",
    "--fault-seed",
    "--mcp-server",
    "--record-into",
    "--executor",
    "--ray-address",
    "--json",
    "--no-plots",
    "-O",
    "--agent-option",
    "--width",
    "--depth-unit",
    "--max-observation-chars",
    "--system-prompt",
    "--give-up-backtrack",
    "--depth-cut-backtrack",
    "--diversity-prompt",
    "--on-model-error",
]
"""The flags of ``sandbox run`` before they were made from ``RunConfig``."""


def _parser(module: Any) -> argparse.ArgumentParser:
    top = argparse.ArgumentParser()
    subparsers = top.add_subparsers()
    module.register(subparsers)
    parser: argparse.ArgumentParser = next(iter(subparsers.choices.values()))
    return parser


def _dests(parser: argparse.ArgumentParser) -> set[str]:
    return {a.dest for a in parser._actions}


def test_every_run_setting_has_a_flag() -> None:
    dests = _dests(_parser(run))
    assert [s.path for s in setting_fields(RunConfig) if s.path not in dests] == []
    compare_dests = _dests(_parser(compare))
    missing = [
        s.path
        for s in setting_fields(CompareConfig)
        if s.path not in compare_dests and s.path not in NOT_FLAGS
    ]
    assert missing == []


def test_the_flags_keep_their_names_and_defaults() -> None:
    parser = _parser(run)
    flags = {o for a in parser._actions for o in a.option_strings}
    assert [f for f in FLAGS_BEFORE if f not in flags] == []
    config = run.config_from_args(parser.parse_args([]))
    assert config == RunConfig()  # no flag given: the model's defaults, nothing else
    assert config.model.name == "noisy-reference" and config.budget.max_model_calls == 200
    assert (config.executor.name, config.executor.concurrency) == ("local", 4)
    assert (config.eval.plots, config.output.json_line) == (True, False)
    given = run.config_from_args(
        parser.parse_args(["--tasks", "a,b", "--tasks", "c", "--no-plots", "--json", "-O", "k=1"])
    )
    assert given.tasks == ["a,b", "c"]  # repeated and comma-separated, as select_tasks reads
    assert (given.eval.plots, given.output.json_line, given.agent.options) == (
        False,
        True,
        {"k": 1},
    )


def test_agent_and_protocol_help_come_from_their_registries() -> None:
    class Careful(ReActAgent):
        """Checks twice before it answers."""

        name = "careful"

    with STRATEGIES.registered("careful", strategy_entry(Careful)):
        text = _parser(run).format_help()
    assert "careful (Checks twice before it answers)" in " ".join(text.split())
    assert "react (one chain" in " ".join(text.split())
    compare_help = " ".join(_parser(compare).format_help().split())
    assert "toolbench (ToolEval (StableToolBench)" in compare_help


def test_every_registry_a_flag_names_resolves() -> None:
    for model in (RunConfig, CompareConfig):
        for setting in setting_fields(model):
            if setting.flag.registry:
                assert registry_entries(setting.flag.registry), setting.path
