"""Options of the run's registered things, and things of the user's own code named by path.

What it protects: ``--miss-option``, ``--transport-option`` and ``--executor-option`` reach the
miss policy, the tool transport and the executor through their options classes, and the run
records them; an option the thing does not take, or an unknown name, is a one-line exit 2 before
any run folder exists; ``--transport`` and ``--model`` resolve a ``package.module:NAME`` of the
user's own module; a miss policy's ``records`` (not its name) decides the run's overlay.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from mock_tools import Suite, load_suite
from mock_tools.miss import MISS_POLICIES, NearestPolicy, policy_kind
from sandbox.cli import main
from sandbox.models import ModelKind
from sandbox.models.offline import build_reference
from sandbox.run.executor import EXECUTORS, ExecutorKind, LocalExecutor, build_executor
from sandbox.store import RunConfig, RunStore
from sandbox.tool_envs import open_tool_envs
from sandbox.tool_envs.factory import ClientOptions, HttpToolEnvs, ToolTransport

MINI = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"

ECHO_KIND = ModelKind("echo-reference", build_reference, direct=True, summary="the reference")
"""A model kind of "the user's own module", named by path: ``test_plugin_options:ECHO_KIND``."""


def _in_process(config: RunConfig, suite: Suite, env: Any, options: ClientOptions) -> Any:
    from sandbox.tool_envs.factory import TOOL_TRANSPORTS

    opened = TOOL_TRANSPORTS.get("in-process").open(config, suite, env, options)
    OPENED.append(options)
    return opened


OPENED: list[ClientOptions] = []
SPY = ToolTransport("spy", _in_process, options=ClientOptions)
"""A transport of "the user's own module" (``--transport test_plugin_options:SPY``)."""


class Keep(NearestPolicy):
    """A policy that records, whatever it is called: the run gets an overlay for it."""

    name = "keep-all"
    records = True


def _run(tmp_path: Path, *flags: str) -> list[str]:
    out = tmp_path / "runs"
    return ["run", "--suite", str(MINI), "--model", "reference", "--out", str(out), *flags]


def test_miss_options_reach_the_policy_and_the_manifest(tmp_path: Path) -> None:
    argv = _run(tmp_path, "--miss-policy", "nearest", "--miss-option", "threshold=40")
    assert main([*argv, "--run-id", "near", "--no-plots"]) == 0
    config = RunStore.open(tmp_path / "runs" / "near").manifest.config
    assert config.tools.miss_policy == "nearest" and config.tools.miss_options == {"threshold": 40}

    async def threshold() -> float:
        async with open_tool_envs(config, load_suite(MINI)) as tools:
            assert isinstance(tools, HttpToolEnvs) and tools.service is not None
            policy = tools.service.miss_policy
            assert isinstance(policy, NearestPolicy)
            return policy.threshold

    assert asyncio.run(threshold()) == 40


@pytest.mark.parametrize(
    ("flags", "says"),
    [
        (
            ["--miss-policy", "nearest", "--miss-option", "colour=red"],
            "miss policy 'nearest' does not take option(s) 'colour'; it takes: threshold",
        ),
        (["--miss-option", "threshold=40"], "miss policy 'error' does not take option(s)"),
        (["--miss-policy", "nearest", "--miss-option", "threshold=x"], "threshold: Input should"),
        (["--miss-policy", "nope"], "unknown miss policy 'nope'; known: error, nearest"),
        (["--transport", "pigeon"], "unknown tool transport 'pigeon'; known: in-process, http"),
        (["--transport-option", "colour=1"], "tool transport 'in-process' does not take option"),
        (["--transport-option", "timeout=0"], "timeout: Input should be greater than 0"),
        (["--executor-option", "workers=2"], "executor 'local' does not take option(s) 'workers'"),
        (["--executor", "ray", "--executor-option", "max_restarts=-1"], "max_restarts: Input"),
        (["--agent", "nowhere.at_all:Agent"], "cannot import agent nowhere.at_all:Agent"),
        (["--agent", "sandbox.errors:ConfigError"], "is not a strategy class"),
    ],
)
def test_bad_names_and_options_are_one_line_before_any_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], says: str
) -> None:
    assert main([*_run(tmp_path), *flags]) == 2
    err = capsys.readouterr().err
    assert says in err and err.count("\n") <= 2, err  # the run's header line, then the error
    assert not (tmp_path / "runs").exists() or list((tmp_path / "runs").iterdir()) == []


def test_a_transport_and_a_model_kind_of_the_user_s_module_by_path(tmp_path: Path) -> None:
    OPENED.clear()
    flags = ["--transport", f"{__name__}:SPY", "--transport-option", "timeout=7"]
    argv = [*_run(tmp_path, *flags, "--run-id", "spied", "--json", "--no-plots")]
    argv[argv.index("reference")] = f"{__name__}:ECHO_KIND"
    assert main(argv) == 0
    assert [o.timeout for o in OPENED] == [7.0]
    manifest = RunStore.open(tmp_path / "runs" / "spied").manifest
    assert manifest.model["kind"] == f"{__name__}:ECHO_KIND"
    assert manifest.config.tools.transport_options == {"timeout": 7}
    scores = json.loads((tmp_path / "runs" / "spied" / "scores.json").read_text())
    assert scores["pass_rate"]["solved"] >= 1  # the reference path, answered


def test_an_executor_gets_its_validated_options(tmp_path: Path) -> None:
    seen: list[Any] = []

    def build(config: RunConfig, options: Any) -> LocalExecutor:
        seen.append(options)
        return LocalExecutor()

    with EXECUTORS.registered("mine", ExecutorKind("mine", build, options=ClientOptions)):
        config = RunConfig.model_validate({"executor": {"name": "mine", "options": {"timeout": 3}}})
        assert isinstance(build_executor(config), LocalExecutor)
    assert [o.timeout for o in seen] == [3.0]


def test_the_run_s_overlay_follows_the_policy_s_records(tmp_path: Path) -> None:
    overlay = tmp_path / "kept.sqlite"
    with MISS_POLICIES.registered("keep-all", policy_kind(Keep)):
        flags = ["--miss-policy", "keep-all", "--overlay", str(overlay), "--run-id", "kept"]
        assert main([*_run(tmp_path, *flags), "--no-plots"]) == 0
    # read where the policy is no longer registered: a recorded config is read as written
    manifest = RunStore.open(tmp_path / "runs" / "kept").manifest
    assert manifest.config.tools.miss_policy == "keep-all"
    assert manifest.tools["miss_policy"] == "keep-all"
    assert manifest.tools["overlay"]["path"] == str(overlay)


def test_serve_takes_miss_options_from_a_config_file(tmp_path: Path) -> None:
    import argparse

    from sandbox.commands import serve

    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers())
    file = tmp_path / "serve.yaml"
    file.write_text("miss_policy: nearest\nmiss_option: {threshold: 55}\n", encoding="utf-8")
    argv = ["serve", str(MINI), "--config", str(file)]
    assert serve.options_from_args(parser.parse_args(argv)).miss_options == {"threshold": 55}
    argv += ["-C", "miss_option=threshold=60"]
    assert serve.options_from_args(parser.parse_args(argv)).miss_options == {"threshold": 60}
