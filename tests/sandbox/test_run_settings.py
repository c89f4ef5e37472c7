"""What a run's config decides beyond its flags: a preset's values, per-task settings, and the
tool env's dispatch rule, observation rendering and recordings scope taken from the suite."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml
from harness_suite import suite_path
from pydantic import ValidationError

from mock_tools import load_suite
from sandbox.commands.run import config_from_args, register
from sandbox.run import run_suite
from sandbox.store import RunConfig, read_trajectories
from sandbox.store.config import TaskSettings
from sandbox.tool_envs import open_tool_envs


def test_a_preset_fills_what_the_config_leaves_unset() -> None:
    config = RunConfig(agent={"name": "dfsdt", "options": {"width": 3}}, preset="toolbench")
    params = config.strategy().params
    assert params["width"] == 3  # given explicitly: kept
    assert (params["depth_unit"], params["max_observation_chars"]) == ("toolbench_nodes", 1024)
    assert params["on_model_error"] == "prune" and params["depth_cut_backtrack"] == 1
    assert config.agent.options == {"width": 3}  # the config records what was given
    assert config.budget_for().max_depth == 12 and config.budget_for().max_model_calls == 200
    own = RunConfig(agent={"name": "react"}, preset="toolbench", budget={"max_depth": 5})
    assert own.budget_for().max_depth == 5
    react = RunConfig(agent="react", preset="toolbench").strategy().params
    assert "width" not in react and react["depth_unit"] == "toolbench_nodes"
    with pytest.raises(ValidationError, match="unknown preset 'fast'; known: toolbench"):
        RunConfig(preset="fast")


def test_preset_flag() -> None:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    args = parser.parse_args(["run", "--agent", "dfsdt", "--preset", "toolbench", "--width", "4"])
    config = config_from_args(args)
    assert config.preset == "toolbench" and config.strategy().params["width"] == 4
    with pytest.raises(SystemExit):
        parser.parse_args(["run", "--preset", "nope"])


def test_task_settings_override_the_run_for_their_task(tmp_path: Path) -> None:
    config = RunConfig(
        suite=str(suite_path(tmp_path)),
        agent="dfsdt",
        model="reference",
        out=str(tmp_path / "runs"),
        task_settings={"mini_g1_track": TaskSettings(agent_options={"width": 1}, max_depth=3)},
    )
    assert config.strategy("mini_g1_track").params["width"] == 1
    assert config.budget_for("mini_g1_track").max_depth == 3
    assert config.budget_for().max_depth is None
    result = run_suite(config, show_progress=False)
    trees = {
        t.scenario_id: (t.agent.params["width"], t.tree["depth_limit"])
        for t in read_trajectories(result.path)
    }
    assert trees.pop("mini_g1_track") == (1, 3)
    assert set(trees.values()) == {(2, 6)}
    with pytest.raises(ValidationError):
        TaskSettings(agent_options={}, max_depth=0)


def _toolbench_suite(tmp_path: Path) -> Path:
    root = tmp_path / "suite"
    shutil.copytree(suite_path(tmp_path), root)
    meta = yaml.safe_load((root / "suite.yaml").read_text())
    meta.update(dispatch="toolbench_suffix", ascii_observations=True)
    (root / "suite.yaml").write_text(yaml.safe_dump(meta))
    own = {
        "tool": "shipping",
        "api": "track_parcel",
        "args": {"parcel_id": "PX-100"},
        "response": {"body": {"status": "livré à Lisboa"}},
        "scope": "imported/mini_g1_track",
    }
    with (root / "recordings" / "shipping.jsonl").open("a") as fh:
        fh.write(json.dumps(own) + "\n")
    return root


async def test_the_tool_env_takes_dispatch_rendering_and_scope_from_suite_and_run(
    tmp_path: Path,
) -> None:
    root = _toolbench_suite(tmp_path)
    suite = load_suite(root)
    task = suite.task("mini_g1_track")

    async def observe(**config: Any) -> tuple[str, str]:
        async with open_tool_envs(RunConfig(suite=str(root), **config), suite) as tools:
            env = tools.for_episode(task, session="s")
            obs = await env.call("track_parcel_for_shipping", {"parcel_id": "PX-100"})
            return env.dispatch, obs.content  # type: ignore[attr-defined]

    rule, text = await observe(recording_scope="imported")
    assert rule == "toolbench_suffix"
    assert text == '{"error": "", "response": {"status": "livr\\u00e9 \\u00e0 Lisboa"}}'
    _, shared = await observe()
    assert '"delivered"' in shared
