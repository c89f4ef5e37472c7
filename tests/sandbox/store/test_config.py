"""``RunConfig``'s sections: old flat manifests upgrade into them, secrets are a property of the
field, the budget comes from its section, and copies by path refuse names that do not exist."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from agents.budget import Budget
from sandbox.replay.replay import compare_trajectories
from sandbox.run import resume_run
from sandbox.run.runner import RESUMABLE_OVERRIDES, SECRET_FIELDS
from sandbox.store import RunStore, read_trajectories
from sandbox.store.config import BudgetConfig, RunConfig
from sandbox.store.setting import secret_paths, setting_fields

ROOT = Path(__file__).resolve().parents[3]

FLAT: dict[str, Any] = {
    "suite": "scenarios/default",
    "agent": "dfsdt",
    "agent_options": {"width": 3},
    "model": "noisy-reference:0.3",
    "model_options": {"x": 1},
    "seed": 7,
    "concurrency": 2,
    "trials": 2,
    "tasks": ["g1_*"],
    "max_model_calls": 50,
    "max_tool_calls": 9,
    "max_tokens": 1000,
    "max_seconds": 30.0,
    "max_cost": 0.5,
    "max_run_cost": 2.0,
    "max_depth": 4,
    "out": "elsewhere",
    "run_id": "old-run",
    "tools_url": None,
    "mcp_server": None,
    "record_into": None,
    "tools_replay": None,
    "miss_policy": "simulate",
    "simulator": "schema-sim",
    "upstream_url": None,
    "overlay": "o.sqlite",
    "fault_rate": 0.1,
    "fault_seed": 3,
    "model_cache": "cache.sqlite",
    "executor": "local",
    "ray_address": None,
    "preset": "toolbench",
    "recording_scope": "scope",
    "task_settings": {"g1_a": {"max_depth": 2}},
}
"""Every field of the flat ``RunConfig`` that manifests held before the sections existed."""


def test_a_flat_manifest_config_upgrades_into_its_sections() -> None:
    config = RunConfig.model_validate(FLAT)
    assert (config.agent.name, config.agent.options) == ("dfsdt", {"width": 3})
    assert (config.model.name, config.model.options) == ("noisy-reference:0.3", {"x": 1})
    assert config.model.cache == "cache.sqlite"
    assert (config.seed, config.trials, config.tasks) == (7, 2, ["g1_*"])
    assert config.budget.model_dump() == {
        "max_model_calls": 50,
        "max_tool_calls": 9,
        "max_tokens": 1000,
        "max_seconds": 30.0,
        "max_cost": 0.5,
        "max_depth": 4,
        "max_user_turns": None,
        "max_turn_model_calls": None,
        "max_run_cost": 2.0,
    }
    assert (config.tools.miss_policy, config.tools.simulator) == ("simulate", "schema-sim")
    assert (config.tools.overlay, config.tools.fault_rate, config.tools.fault_seed) == (
        "o.sqlite",
        0.1,
        3,
    )
    assert config.tools.recording_scope == "scope"
    assert (config.executor.name, config.executor.concurrency) == ("local", 2)
    assert (config.output.out, config.output.run_id) == ("elsewhere", "old-run")
    assert config.preset == "toolbench" and config.task_settings["g1_a"].max_depth == 2
    again = RunConfig.model_validate(json.loads(config.model_dump_json()))
    assert again == config  # the nested form reads back as itself


def test_the_oldest_layouts_still_read() -> None:
    """Agent options as top-level fields, and the ``fork`` field, as the upgrade before had them."""
    config = RunConfig.model_validate({"agent": "dfsdt", "width": 2, "depth_unit": "turns"})
    assert config.agent.options == {"width": 2, "depth_unit": "turns"}
    fork = RunConfig.model_validate({"model": "reference", "fork": {"run": "r", "task": "t"}})
    assert fork.model.name == "fork" and fork.model.options["then"] == "reference"


@pytest.mark.parametrize("fixture", sorted((ROOT / "replays").iterdir()), ids=lambda p: p.name)
def test_the_committed_replays_load_into_sections(fixture: Path) -> None:
    raw = json.loads((fixture / "manifest.json").read_text())["config"]
    assert isinstance(raw["agent"], str)  # still flat on disk: they are not rewritten
    config = RunStore.open(fixture).manifest.config
    assert config.agent.name == raw["agent"] and config.model.name == raw["model"]
    assert config.output.run_id == fixture.name


def test_a_setting_given_flat_and_nested_with_two_values_is_refused() -> None:
    with pytest.raises(ValidationError, match="budget.max_depth is given twice"):
        RunConfig.model_validate({"budget": {"max_depth": 3}, "max_depth": 4})
    same = RunConfig.model_validate({"budget": {"max_depth": 3}, "max_depth": 3})
    assert same.budget.max_depth == 3


def test_secret_settings_are_marked_on_the_field_and_recorded_redacted() -> None:
    assert tuple(secret_paths(RunConfig)) == SECRET_FIELDS
    assert set(SECRET_FIELDS) == {
        "model.name",
        "tools.url",
        "tools.mcp_server",
        "tools.simulator",
        "tools.upstream_url",
        "executor.ray_address",
        "agent.options",
        "model.options",
        "tools.miss_options",
        "tools.transport_options",
        "executor.options",
        "eval.judge",
    }
    assert set(SECRET_FIELDS) <= set(RESUMABLE_OVERRIDES)
    config = RunConfig(
        model={"name": "openai:m@http://alice:pw@host/v1"},
        tools={"url": "http://bob:pw2@host:1/?api_key=k"},
    )
    written = config.model_dump_json()
    assert "alice" not in written and "pw2" not in written and "api_key=***" in written
    assert config.model.name == "openai:m@http://alice:pw@host/v1"  # in memory: whole


def test_the_episode_budget_is_the_budget_section_without_the_run_limit() -> None:
    assert set(Budget.model_fields) < set(BudgetConfig.model_fields)  # one declaration
    config = RunConfig(budget={"max_depth": 3, "max_tokens": 10, "max_run_cost": 1.0})
    assert config.budget_for() == Budget(max_depth=3, max_tokens=10)
    preset = RunConfig(agent={"name": "dfsdt"}, preset="toolbench")
    assert preset.budget_for().max_depth == 12  # the preset fills what the run leaves unset


def test_copies_by_path_and_no_silent_flat_update() -> None:
    config = RunConfig()
    moved = config.with_values({"output.out": "x", "budget.max_depth": 2, "seed": 4})
    assert (moved.output.out, moved.budget.max_depth, moved.seed) == ("x", 2, 4)
    assert config.output.out == "runs"  # the original is untouched
    with pytest.raises(KeyError, match="with_values"):
        config.model_copy(update={"run_id": "r"})


def test_every_section_field_has_a_description() -> None:
    undocumented = [s.path for s in setting_fields(RunConfig) if not s.field.description]
    assert undocumented == []


def test_a_run_with_a_flat_manifest_resumes_and_finishes_as_it_would_have(tmp_path: Path) -> None:
    """An interrupted run whose manifest predates the sections: its resume reads the old config,
    runs the missing episodes exactly as they ran, and writes the manifest in sections."""
    committed = ROOT / "replays" / "react-noisy-default"
    run = tmp_path / "react-noisy-default"
    shutil.copytree(committed, run)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["suite"]["path"] = str(ROOT / manifest["suite"]["path"])
    manifest |= {"status": "interrupted", "ended_at": None}
    (run / "manifest.json").write_text(json.dumps(manifest))
    lines = (run / "trajectories.jsonl").read_text().splitlines(keepends=True)
    (run / "trajectories.jsonl").write_text("".join(lines[:-5]))
    result = resume_run(run, show_progress=False)
    assert (result.status, result.ran) == ("completed", 5)
    redone = {(t.scenario_id, t.trial): t for t in read_trajectories(run)}
    for want in read_trajectories(committed):
        got = redone[(want.scenario_id, want.trial)]
        assert compare_trajectories(want, got).first_diff is None, want.scenario_id
    config = json.loads((run / "manifest.json").read_text())["config"]
    assert config["agent"] == {"name": "react", "options": {}, "system_prompt_file": None}
