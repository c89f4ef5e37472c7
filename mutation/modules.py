"""The core modules whose mutation score is kept, in groups that share a test selection.

A group is one mutmut run: its modules are mutated, its tests are the pytest selection the run
starts from (mutmut then traces which of those tests call each mutated function and runs only
those against that function's mutants). The selections leave out tests that reach the code only
through a subprocess (a mutant is not active there), tests on the real data beside the checkout
(absent from the run's copy) and slow end-to-end tests whose code paths faster tests cover.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GROUPS", "Group", "module_path", "group_of"]


@dataclass(frozen=True)
class Group:
    name: str
    modules: tuple[str, ...]
    """Dotted module names (``agents.dfsdt``); a package name stands for its modules."""
    tests: tuple[str, ...]
    """The pytest selection (paths, node ids) the group's run starts from."""
    deselect: tuple[str, ...] = field(default=())
    """Node ids or files under ``tests`` to leave out (``--deselect``)."""


def module_path(module: str) -> Path:
    """``agents.dfsdt`` -> ``agents/dfsdt.py``."""
    return Path(*module.split(".")).with_suffix(".py")


def _package(name: str, *modules: str) -> tuple[str, ...]:
    return tuple(f"{name}.{m}" for m in modules)


GROUPS: tuple[Group, ...] = (
    Group(
        name="agents",
        modules=_package(
            "agents",
            "step",
            "chain",
            "outcome",
            "dfsdt",
            "react",
            "react_at_n",
            "accounting",
            "budget",
            "finish",
        ),
        tests=(
            "tests/agents",
            "tests/sandbox/test_strategies.py",
            "tests/sandbox/test_toy_strategy.py",
            "tests/sandbox/interop/test_toolbench_semantics.py",
        ),
    ),
    Group(
        name="mock_tools",
        modules=_package(
            "mock_tools",
            "service",
            "canonical",
            "overlay",
            "store",
            "recording_index",
            "history",
            "faults",
            "miss",
        ),
        tests=(
            "tests/mock_tools",
            "tests/hostile/test_mock_server.py",
            "tests/hostile/test_mock_server_names.py",
            "tests/hostile/test_tool_answers.py",
            "tests/hostile/test_suite_files.py",
            "tests/hostile/test_store_memory.py",
            "tests/sandbox/test_toolenv_http.py",
            "tests/sandbox/interop/test_virtual_parity.py",
            "tests/scenarios",
        ),
        deselect=(
            "tests/mock_tools/test_real_catalogs.py",
            "tests/mock_tools/test_openapi_fuzz.py",
        ),
    ),
    Group(
        name="replay",
        modules=_package("sandbox.replay", "replay", "fork", "fixtures"),
        tests=(
            "tests/sandbox/test_replay_compare.py",
            "tests/sandbox/test_replay_run.py",
            "tests/sandbox/test_replay_fixtures.py",
            "tests/sandbox/test_fixture_install.py",
            "tests/sandbox/test_fork.py",
            "tests/sandbox/test_fork_settings.py",
            "tests/sandbox/test_fixture_differences.py",
            "tests/sandbox/test_replay_unrecorded.py",
            "tests/sandbox/interop/test_replay_toolbench.py",
        ),
    ),
    Group(
        name="eval",
        modules=(
            *_package("sandbox.eval", "pass_rate", "win_rate", "stats"),
            *_package(
                "sandbox.eval.tooleval",
                "answer",
                "functions",
                "preference",
                "protocol_toolbench",
                "rules",
                "rules_judge",
            ),
            *_package(
                "sandbox.eval.steps",
                "actions",
                "arg_scores",
                "default_metrics",
                "dimensions",
                "efficiency",
                "episode",
                "format_score",
                "matching",
                "measure",
                "metric",
                "plan_score",
                "reason_score",
                "replies",
                "review_score",
                "selection",
                "similarity",
                "step_scores",
                "teval_metrics",
                "tool_selection",
                "tooleyes_metrics",
                "ultratool_metrics",
            ),
        ),
        tests=(
            "tests/sandbox/eval",
            "tests/sandbox/test_paired_agreement.py",
            "tests/sandbox/test_compare_report.py",
            "tests/sandbox/commands/test_rescore_benchmarks.py",
        ),
        # fails in mutmut's tracing run of this selection only ("double escape" gets
        # 'book_hotel'), passing alone and in the suite: an order dependence not found yet; it
        # tests sandbox.eval.benchmarks, which is no core module
        deselect=(
            "tests/sandbox/eval/benchmarks/test_bench_ultratool.py"
            "::test_selected_tools_pair_as_cal_acc_for_select",
        ),
    ),
    Group(
        name="view",
        modules=_package(
            "sandbox.view",
            "app",
            "catalog",
            "chat",
            "episode_page",
            "export",
            "leaderboard",
            "pages",
            "pooling",
            "run_page",
            "side_by_side",
            "state_diff",
            "viewer",
        ),
        tests=(
            "tests/sandbox/view",
            "tests/sandbox/test_numbers_agree.py",
        ),
        # Chromium pages test the viewer's script (its Python is reached by the API tests);
        # the view command's tests run it as a program
        deselect=(
            "tests/sandbox/view/test_view_browser.py",
            "tests/sandbox/view/test_view_command.py",
        ),
    ),
    Group(
        name="external",
        modules=_package(
            "sandbox.external",
            "ending",
            "episode",
            "gateway",
            "http_agent",
            "mcp_tools",
            "options",
            "process",
            "proxy",
            "record",
            "scope",
            "strategy",
        ),
        tests=("tests/sandbox/external",),
        # runs killed by signals, as programs
        deselect=("tests/sandbox/external/test_external_interrupt.py",),
    ),
    Group(
        name="models",
        modules=_package(
            "sandbox.models",
            "cache",
            "entities",
            "first_call",
            "fork",
            "kinds",
            "launch",
            "managed",
            "offline",
            "preset",
            "prices",
            "provider",
            "remote",
            "replay",
            "schema_sim",
            "server_guard",
            "server_process",
            "simulators",
            "specs",
            "users",
        ),
        tests=(
            "tests/sandbox/test_models.py",
            "tests/sandbox/test_model_cache.py",
            "tests/sandbox/test_model_launch.py",
            "tests/sandbox/test_entities.py",
            "tests/sandbox/test_costs.py",
            "tests/sandbox/test_plugin_options.py",
            "tests/sandbox/test_presets_applied.py",
            "tests/agents/models",
        ),
    ),
    Group(
        name="tool_envs",
        modules=_package(
            "sandbox.tool_envs",
            "factory",
            "forward",
            "http",
            "mcp",
            "mcp_catalog",
            "mcp_client",
            "mcp_record",
            "recorded",
            "server_check",
            "stderr_tail",
        ),
        tests=(
            "tests/sandbox/test_toolenv_http.py",
            "tests/sandbox/test_mcp_catalog.py",
            "tests/sandbox/test_mcp_run.py",
            "tests/sandbox/test_serve_mcp.py",
            "tests/sandbox/test_executors.py",
            "tests/sandbox/test_run_settings.py",
            "tests/hostile/test_live_tools.py",
        ),
    ),
    Group(
        name="store",
        modules=_package(
            "sandbox.store",
            "config",
            "config_upgrade",
            "defaults",
            "episode_index",
            "error_text",
            "gc_pause",
            "group_commit",
            "lock",
            "manifest",
            "redact",
            "run_store",
            "selection",
            "setting",
            "suite_folder",
            "paths",
            "trajectory_file",
        ),
        tests=(
            "tests/sandbox/store",
            "tests/sandbox/test_run_store.py",
            "tests/sandbox/test_episode_index.py",
            "tests/sandbox/test_gc_pause.py",
            "tests/sandbox/test_group_commit.py::test_episodes_finishing_together_share_one_group",
            "tests/sandbox/test_group_commit.py"
            "::test_a_group_that_cannot_be_written_reports_nothing_and_stops_the_run",
            "tests/sandbox/test_group_commit.py"
            "::test_a_report_that_raises_stops_nothing_else_and_is_raised_by_the_next_check",
            "tests/sandbox/test_run_settings.py",
            "tests/sandbox/test_presets_applied.py",
            "tests/sandbox/commands",
            "tests/test_cli_docs.py",
        ),
    ),
)


def group_of(module: str) -> Group | None:
    """The group that holds ``module``, if it is a core module."""
    return next((g for g in GROUPS if module in g.modules), None)
