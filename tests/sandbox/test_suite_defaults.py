"""A suite's ``defaults``: the episode limits a run uses where neither it nor its preset sets
them (a BFCL import sets ``max_depth`` to BFCL's 20 steps per turn and the reply, without which
DFSDT's depth of 6 cut the reference on 3 of BFCL's 200 base entries)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from sandbox.cli import main
from sandbox.errors import ConfigError
from sandbox.run.runner import with_suite_defaults
from sandbox.store import RunConfig

TINY = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "tinyworld"


def test_defaults_fill_the_limits_the_run_leaves_unset() -> None:
    config = RunConfig(suite="s")
    assert with_suite_defaults(config, {"max_depth": 21}).budget.max_depth == 21
    given = config.with_values({"budget.max_depth": 4})
    assert with_suite_defaults(given, {"max_depth": 21}).budget.max_depth == 4
    assert with_suite_defaults(config, {}) is config


def test_a_presets_values_win_over_the_suites() -> None:
    config = RunConfig(suite="s", preset="toolbench")
    assert with_suite_defaults(config, {"max_depth": 21}).budget.max_depth is None


def test_a_default_that_is_no_episode_limit_is_refused() -> None:
    with pytest.raises(ConfigError, match="a suite's defaults are episode limits"):
        with_suite_defaults(RunConfig(suite="s"), {"agent": "dfsdt"})
    with pytest.raises(ConfigError, match="the suite's defaults"):
        with_suite_defaults(RunConfig(suite="s"), {"max_depth": 0})


def test_a_run_records_the_suites_default_in_its_manifest(tmp_path: Path, capsys) -> None:
    suite = Path(shutil.copytree(TINY, tmp_path / "bank"))
    meta = suite / "suite.yaml"
    meta.write_text(meta.read_text() + "defaults: {max_depth: 9}\n")
    out = tmp_path / "runs"
    argv = ["run", "--suite", str(suite), "--tasks", "pay_bob", "--model", "reference"]
    assert main([*argv, "--out", str(out), "--no-plots", "--json"]) == 0
    run = Path(json.loads(capsys.readouterr().out.strip().splitlines()[-1])["run"])
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["config"]["budget"]["max_depth"] == 9
