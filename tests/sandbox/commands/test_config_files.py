"""Config files and ``-C``: file < flags < ``-C``; a manifest's config reruns its run byte for byte;
``--print-config`` round-trips; bad files and unknown keys are one-line errors (exit 2)."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from sandbox.cli import main
from sandbox.commands import serve
from sandbox.commands.run import config_from_args, register
from sandbox.store import RunStore
from sandbox.store.config import RunConfig

ROOT = Path(__file__).resolve().parents[3]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
VOLATILE = {"started_at", "ended_at", "wall_seconds", "latency_ms"}
"""What differs between two runs of the same config: times (the run ids are the same here)."""


def _config(*argv: str) -> RunConfig:
    parser = argparse.ArgumentParser()
    register(parser.add_subparsers())
    return config_from_args(parser.parse_args(["run", *argv]))


def _write(path: Path, data: Any) -> str:
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data)
    return str(path)


def _trajectories(run: Path) -> list[str]:
    """The run's trajectory lines with times zeroed, in episode order."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: (0 if k in VOLATILE else strip(v)) for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    lines = (run / "trajectories.jsonl").read_text().splitlines()
    records = sorted(
        (json.loads(line) for line in lines), key=lambda r: (r["scenario_id"], r["trial"])
    )
    return [json.dumps(strip(r)) for r in records]


def test_file_then_flags_then_overrides_later_wins(tmp_path: Path) -> None:
    file = _write(
        tmp_path / "run.yaml",
        {"seed": 5, "budget": {"max_depth": 3, "max_model_calls": 7}, "agent": {"name": "dfsdt"}},
    )
    from_file = _config("--config", file)
    assert (from_file.seed, from_file.budget.max_depth, from_file.agent.name) == (5, 3, "dfsdt")
    assert from_file.budget.max_model_calls == 7  # no flag given: its default does not count
    flags = _config("--config", file, "--seed", "6", "--max-depth", "4")
    assert (flags.seed, flags.budget.max_depth, flags.budget.max_model_calls) == (6, 4, 7)
    both = _config("--config", file, "--seed", "6", "-C", "seed=8", "--set", "budget.max_depth=9")
    assert (both.seed, both.budget.max_depth) == (8, 9)


def test_agent_options_merge_option_by_option(tmp_path: Path) -> None:
    file = _write(tmp_path / "run.yaml", {"agent": {"name": "dfsdt", "options": {"width": 3}}})
    config = _config("--config", file, "--give-up-backtrack", "1", "-C", "agent.options.width=4")
    assert config.agent.options == {"width": 4, "give_up_backtrack": 1}
    assert _config("--config", file, "-O", "width=5").agent.options == {"width": 5}


def test_override_values_follow_the_setting_type() -> None:
    config = _config(
        "-C",
        "output.run_id=2024",  # text stays text
        "-C",
        "eval.plots=false",
        "-C",
        "tools.fault_rate=0.25",
        "-C",
        "tasks=[a, b]",
        "-C",
        "model.cache=null",
    )
    assert config.output.run_id == "2024" and config.eval.plots is False
    assert config.tools.fault_rate == 0.25 and config.tasks == ["a", "b"]
    assert config.model.cache is None
    assert _config("-C", "tasks=g1_*").tasks == ["g1_*"]
    assert _config("-C", "agent.options.system_prompt=Think: then act").agent.options == {
        "system_prompt": "Think: then act"
    }


def test_a_flat_manifest_config_is_a_config_file_too(tmp_path: Path) -> None:
    flat = json.loads((ROOT / "replays" / "react-noisy-default" / "manifest.json").read_text())
    config = _config("--config", _write(tmp_path / "old.json", json.dumps(flat["config"])))
    assert config == RunStore.open(ROOT / "replays" / "react-noisy-default").manifest.config


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["-C", "budget.max_dept=3"],
            "unknown setting budget.max_dept; section budget takes: max_",
        ),
        (
            ["-C", "bduget.max_depth=3"],
            "unknown setting bduget.max_depth; the top level takes: suite",
        ),
        (["-C", "budget=3"], "budget is a section; give one of its settings: max_model_calls"),
        (["-C", "seed.x=3"], "seed is a setting, not a section"),
        (["-C", "seed"], "-C expects PATH=VALUE"),
        (["-O", "width"], "--agent-option expects KEY=VALUE"),
        (["-C", "budget.max_depth=0"], "--max-depth (budget.max_depth): Input should be greater"),
        (["-C", "seed=true"], "--seed (seed) takes a number, not true"),
    ],
)
def test_bad_overrides_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    assert main(["run", "--suite", str(MINI), "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err, err
    assert not any(tmp_path.iterdir())  # nothing ran


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("budget: {max_dept: 3}\n", "unknown setting budget.max_dept; section budget takes: "),
        ("tools:\n  nope: 1\n", "unknown setting tools.nope; section tools takes: url, mcp_server"),
        ("seed: [1\n", "is not YAML: "),
        ("- seed\n- 1\n", "holds a list, not a mapping of settings"),
        ("", "holds nothing, not a mapping of settings"),
        ("max_depth: 3\nbudget: {max_depth: 4}\n", "budget.max_depth is given twice"),
        ("just text\n", "holds a str, not a mapping of settings"),
        # a number given true or false is no number (pydantic would make it 1 or 0)
        ("seed: true\n", "--seed (seed) takes a number, not true"),
        ("trials: true\n", "--trials (trials) takes a number, not true"),
        ("budget: {max_cost: false}\n", "--max-cost (budget.max_cost) takes a number, not false"),
        ("executor: {concurrency: true}\n", "(executor.concurrency) takes a number, not true"),
    ],
)
def test_bad_config_files_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, expected: str
) -> None:
    file = _write(tmp_path / "bad.yaml", content)
    assert main(["run", "--config", file, "--out", str(tmp_path / "runs")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and expected in err and "Traceback" not in err, err
    assert main(["run", "--config", str(tmp_path / "missing.yaml")]) == 2
    assert "cannot read config file" in capsys.readouterr().err


def test_print_config_round_trips_and_runs_what_the_flags_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    flags = ["--suite", str(MINI), "--agent", "dfsdt", "--model", "noisy-reference:0.4"]
    flags += ["--seed", "3", "--max-depth", "3", "--width", "3", "--no-plots", "--json"]
    assert main(["run", *flags, "--out", str(tmp_path / "a"), "--print-config"]) == 0
    printed = capsys.readouterr().out
    assert not (tmp_path / "a").exists()  # printed, not run
    assert yaml.safe_load(printed)["budget"]["max_depth"] == 3
    file = _write(tmp_path / "run.yaml", printed)
    assert main(["run", "--config", file, "--print-config"]) == 0
    assert capsys.readouterr().out == printed  # the printed config prints itself
    assert main(["run", *flags, "--out", str(tmp_path / "a"), "--run-id", "r"]) == 0
    assert (
        main(
            [
                "run",
                "--config",
                file,
                "-C",
                "output.out=" + str(tmp_path / "b"),
                "-C",
                "output.run_id=r",
            ]
        )
        == 0
    )
    capsys.readouterr()
    assert _trajectories(tmp_path / "a" / "r") == _trajectories(tmp_path / "b" / "r")


def test_a_manifest_config_alone_reruns_the_run_byte_for_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--suite", str(MINI), "--agent", "dfsdt", "--model", "noisy-reference:0.5"]
    argv += ["--seed", "11", "--trials", "2", "--fault-rate", "0.2", "--out", str(tmp_path)]
    assert main([*argv, "--run-id", "first", "--no-plots"]) == 0
    first = tmp_path / "first"
    config = json.loads((first / "manifest.json").read_text())["config"]
    file = _write(tmp_path / "run.yaml", config)
    kept = tmp_path / "kept"
    shutil.move(first, kept)  # the config names its run folder: make room for the rerun
    assert main(["run", "--config", file]) == 0
    capsys.readouterr()
    again = _trajectories(first)
    assert again == _trajectories(kept) and len(again) > 2
    rerun = json.loads((first / "manifest.json").read_text())["config"]
    assert rerun == config


def test_eval_takes_a_config_file_of_its_own_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--out", str(tmp_path)]
    assert main([*argv, "--run-id", "r", "--no-plots"]) == 0
    capsys.readouterr()
    file = _write(tmp_path / "eval.yaml", {"json_line": True, "plots": False, "seed": 2})
    assert main(["eval", str(tmp_path / "r"), "--config", file]) == 0
    assert json.loads(capsys.readouterr().out)["episodes"] > 0
    bad = _write(tmp_path / "bad.yaml", {"judge_sample": 2})
    assert main(["eval", str(tmp_path / "r"), "--config", bad]) == 2
    assert "unknown setting judge_sample; the top level takes: protocol, judge" in (
        capsys.readouterr().err
    )


def test_serve_takes_its_flags_by_name_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers())
    file = _write(
        tmp_path / "serve.yaml",
        {"port": 9100, "miss_policy": "nearest", "nearest_threshold": 70, "access_log": True},
    )
    argv = ["serve", str(MINI), "--config", file, "--port", "9200", "-C", "nearest_threshold=80"]
    options = serve.options_from_args(parser.parse_args(argv))
    assert (options.port, options.miss_policy) == (9200, "nearest")
    assert options.miss_options == {"threshold": 80}  # --nearest-threshold spells the option
    assert options.access_log is True and options.host == "127.0.0.1"  # the rest: defaults
    bad = _write(tmp_path / "bad.yaml", {"prot": 9000})
    assert main(["serve", str(MINI), "--config", bad]) == 2
    assert "unknown setting prot; this command takes: host, port" in capsys.readouterr().err
    assert main(["serve", str(MINI), "-C", "miss_policy=sometimes"]) == 2
    assert "unknown miss policy 'sometimes'; known: error, nearest" in capsys.readouterr().err
    assert main(["serve", str(MINI), "-C", "access_log=perhaps"]) == 2
    assert "access_log (--access-log) is true or false" in capsys.readouterr().err


def test_serve_takes_its_workers_from_a_file_and_refuses_them_with_mcp(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``workers`` is a setting like the others (file < flag < -C); with MCP it is a usage
    error (exit 2, one line), before anything is served."""
    parser = argparse.ArgumentParser()
    serve.register(parser.add_subparsers())
    file = _write(tmp_path / "serve.yaml", {"workers": 3})
    argv = ["serve", str(MINI), "--config", file]
    assert serve.options_from_args(parser.parse_args(argv)).workers == 3
    argv += ["--workers", "2"]
    assert serve.options_from_args(parser.parse_args(argv)).workers == 2
    argv += ["-C", "workers=4"]
    assert serve.options_from_args(parser.parse_args(argv)).workers == 4
    assert main(["serve", str(MINI), "--config", file, "--mcp"]) == 2
    err = capsys.readouterr().err
    assert "--mcp serves from one process" in err and len(err.strip().splitlines()) == 1


def test_compare_takes_its_agents_and_scoring_from_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = {
        "suite": str(MINI),
        "agents": ["react", "dfsdt"],
        "model": {"name": "reference"},
        "scoring": {"protocol": "default", "judge_order": "random"},
        "eval": {"plots": False},
        "output": {"out": str(tmp_path / "cmp"), "json_line": True},
    }
    assert main(["compare", "--config", _write(tmp_path / "compare.yaml", settings)]) == 0
    line = json.loads(capsys.readouterr().out)
    assert set(line["pass_rate"]) == {"react", "dfsdt"} and line["protocol"] == "default"
    assert main(["compare", "--config", _write(tmp_path / "none.yaml", {"seed": 1})]) == 2
    assert "give --agents A,B,... (run and compare them) or --runs" in capsys.readouterr().err
    assert main(["compare", "--agents", "react", "-C", "scoring.judge_order=sideways"]) == 2
    assert "--judge-order (scoring.judge_order): Input should be 'alternate' or 'random'" in (
        capsys.readouterr().err
    )


def test_redacted_credentials_in_a_config_file_are_asked_for_again(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = _write(tmp_path / "run.yaml", {"model": {"name": "openai:m@http://***@127.0.0.1:9/v1"}})
    assert main(["run", "--config", file, "--suite", str(MINI), "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "model.name holds redacted credentials" in err and "--model" in err
    assert not any(tmp_path.glob("*/manifest.json"))


def test_a_resume_keeps_its_config_refusing_other_values_and_taking_equal_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["run", "--suite", str(MINI), "--model", "reference", "--out", str(tmp_path)]
    assert main([*argv, "--run-id", "r", "--no-plots"]) == 0
    capsys.readouterr()
    run = str(tmp_path / "r")
    assert main(["run", "--resume", run, "-C", "trials=2", "--no-plots"]) == 2
    assert "--trials 2 differs from run r's 1" in capsys.readouterr().err
    assert (
        main(["run", "--resume", run, "--seed", "0", "-C", "trials=1", "--no-plots", "--json"]) == 0
    )
    out, err = capsys.readouterr()
    assert json.loads(out)["episodes"] > 0  # --json was taken
    config = RunStore.open(run).manifest.config
    assert (config.seed, config.trials, config.eval.plots) == (0, 1, False)
    assert main(["run", "--resume", run, "--max-run-cost", "2", "--print-config"]) == 0
    assert yaml.safe_load(capsys.readouterr().out)["budget"]["max_run_cost"] == 2


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "--agent", "react", "--width", "3"],
        ["run", "--agent", "react", "-O", "no_such_option=1"],
        ["compare", "--agents", "react,react@2", "--width", "3"],
        ["compare", "--agents", "react,no-such-agent"],
    ],
    ids=["run: width", "run: -O unknown", "compare: width", "compare: unknown agent"],
)
def test_print_config_refuses_what_the_run_would_refuse(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config the run would reject (an option the chosen agents do not take, an unknown
    agent) is never printed: one line on stderr, exit 2, nothing on stdout."""
    assert main([*argv, "--suite", str(MINI), "--out", str(tmp_path), "--print-config"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert not any(tmp_path.iterdir())
