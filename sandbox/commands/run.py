"""``sandbox run``: run an agent with a model on a suite and store a scored run folder.

sandbox run --suite scenarios/default --agent dfsdt --model noisy-reference --seed 0
sandbox run --model qwen-7b --tasks 'g1-*' --concurrency 8
sandbox run --resume runs/<id>
sandbox run --json        # one summary line on stdout, progress on stderr
sandbox run --mcp-server http://127.0.0.1:8765/mcp --record-into recorded/   # any MCP server
sandbox run --executor ray --ray-address 10.0.0.5:6379                     # on a Ray cluster
sandbox run --config run.yaml -C budget.max_depth=3  # a config file; file < flags < -C
sandbox run --print-config --agent dfsdt > run.yaml  # the settings, as a config file
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Collection
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

import sandbox.external.strategy  # noqa: F401  (registers "external": its options are flags)
from sandbox.commands import COMMANDS
from sandbox.commands.agent_options import add_agent_options
from sandbox.commands.config_files import (
    add_config_flags,
    check_unredacted,
    config_yaml,
    merged_settings,
    settings_from_args,
)
from sandbox.commands.settings_flags import add_settings_flags
from sandbox.store.config import RunConfig
from sandbox.store.setting import hidden_parts, setting_fields, value_at

if TYPE_CHECKING:  # the parser needs none of these; running imports them (start-up stays fast)
    from rich.table import Table

    from sandbox.run import RunResult

__all__ = [
    "add_run_options",
    "config_from_args",
    "register",
    "result_table",
]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help=COMMANDS["run"].help,
        description="Run an agent with a model on a suite; writes runs/<run-id>/. Every setting "
        "is a flag, a key of a --config file and a -C path (docs/cli.md).",
    )
    add_run_options(parser)
    parser.add_argument(
        "--resume",
        metavar="RUN",
        default=None,
        help="continue the run in this folder with its own config (a resume takes "
        "--max-run-cost, --concurrency, --no-plots, --json and the settings its manifest "
        "redacted; any other flag must give the value the run recorded)",
    )
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the settings as YAML on stdout and exit without running (--config of that "
        "output runs the same)",
    )
    parser.set_defaults(handler=handle)


def add_run_options(
    parser: argparse.ArgumentParser,
    *,
    exclude: Collection[str] = (),
    model: type[RunConfig] = RunConfig,
) -> None:
    """The settings of ``model`` (``RunConfig`` or a command's extension of it) as flags, but
    ``exclude``; the strategies' options; ``--config`` and ``-C``. What ``run`` and
    ``compare`` share."""
    add_settings_flags(parser, model, exclude=exclude)
    add_agent_options(parser)
    add_config_flags(parser)


def config_from_args(args: argparse.Namespace) -> RunConfig:
    """The ``RunConfig`` of the files, flags and ``-C`` of ``args``; ``ConfigError`` if invalid."""
    return settings_from_args(args, RunConfig)


def handle(args: argparse.Namespace) -> int:
    from sandbox.run import resolve_strategy, run_suite

    if args.resume:
        return _resume(args)
    config = config_from_args(args)
    resolve_strategy(config)  # an unknown agent or option fails before anything runs (or prints)
    if args.print_config:
        print_config(config)
        return 0
    check_unredacted(config)
    result = run_suite(config, env=os.environ, plots=config.eval.plots)
    show(result, as_json=config.output.json_line)
    return _judge_exit(result)


def _judge_exit(result: RunResult) -> int:
    """1 (one line on stderr) when the judge of ``--judge`` could not answer for an episode
    (left out of the scores; ``sandbox eval RUN --judge MODEL`` asks again), else 0."""
    from sandbox.commands.eval import judge_failure_exit
    from sandbox.commands.judge_options import judge_errors

    return judge_failure_exit(judge_errors(result.labels, []))


def print_config(config: BaseModel) -> None:
    """The settings as a config file on stdout; a note on stderr for each redacted secret."""
    sys.stdout.write(config_yaml(config))
    for setting in setting_fields(type(config)):
        if not setting.secret:
            continue
        for key in hidden_parts(value_at(config, setting.path)):
            path, again = setting.path, f"{setting.flag_name} or -C {setting.path}=..."
            if key:
                path, again = f"{path} {key}", f"{setting.flag_name} {key}=..."
            print(
                f"note: {path} carried credentials, printed redacted: give them again with {again}",
                file=sys.stderr,
            )


def _resume(args: argparse.Namespace) -> int:
    """``--resume RUN``: the run's own config. The settings a resume takes are taken from the
    command line; any other given must equal what the run recorded (``resume_check``)."""
    from sandbox.commands.resume_check import check_unchanged
    from sandbox.run import resume_run
    from sandbox.run.runner import RESUMABLE_OVERRIDES, SECRET_MAPPINGS
    from sandbox.store import RunStore

    store = RunStore.open(args.resume)
    given = _flat(merged_settings(args, RunConfig))
    secrets = _redacted_keys_given(store.manifest.config, given, SECRET_MAPPINGS)
    takes = [p for p in RESUMABLE_OVERRIDES if p not in SECRET_MAPPINGS]
    check_unchanged(store, given, takes)
    overrides = {k: v for k, v in given.items() if k in takes} | secrets
    if args.print_config:
        merged = {
            p: {**value_at(store.manifest.config, p), **v} if p in SECRET_MAPPINGS else v
            for p, v in overrides.items()
        }
        print_config(store.manifest.config.with_values(merged))
        return 0
    result = resume_run(
        args.resume,
        env=os.environ,
        plots=overrides.get("eval.plots", True),
        overrides=overrides,
    )
    show(result, as_json=bool(overrides.get("output.json_line", False)))
    return _judge_exit(result)


def _redacted_keys_given(
    recorded: RunConfig, given: dict[str, Any], mappings: tuple[str, ...]
) -> dict[str, dict[str, Any]]:
    """The keys of secret mappings (``-O command=...``) that ``given`` gives again where the
    run recorded them redacted, taken out of ``given`` (whose other keys must then say what the
    run recorded, as any setting given to a resume)."""
    out: dict[str, dict[str, Any]] = {}
    for path in mappings:
        value = given.get(path)
        if not isinstance(value, dict):
            continue
        hidden = set(hidden_parts(value_at(recorded, path), recorded=True))
        if again := {k: v for k, v in value.items() if k in hidden}:
            out[path] = again
            rest = {k: v for k, v in value.items() if k not in hidden}
            if rest:
                given[path] = rest
            else:
                del given[path]
    return out


def _flat(data: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """A nested mapping of settings as dotted paths (mapping settings stay whole)."""
    out: dict[str, Any] = {}
    for key, value in data.items():
        if isinstance(value, dict) and prefix + key in _SECTIONS:
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[prefix + key] = value
    return out


_SECTIONS = {s.section for s in setting_fields(RunConfig) if s.section}


def show(result: RunResult, *, as_json: bool) -> None:
    """The table (stdout, or stderr under --json) and the JSON summary line (stdout)."""
    from sandbox.commands.console import output_console

    console = output_console(sys.stderr if as_json else sys.stdout)
    console.print(result_table(result))
    u = result.usage
    console.print(
        f"episodes {result.episodes} (ran {result.ran})  status {result.status}  "
        f"model calls {u.model_calls}  tool calls {u.tool_calls}  tokens {u.tokens}  "
        f"cost {u.cost:.4f} USD  infra errors {result.summary.infra_errors}"
        + (f"  user failures {fails}" if (fails := result.summary.user_failures) else "")
    )
    if result.note:
        console.print(f"note: {result.note}")
    console.print(f"run folder: {result.path}")
    if as_json:
        sys.stdout.write(json.dumps(result.json_summary(), separators=(", ", ": ")) + "\n")
        sys.stdout.flush()


def result_table(result: RunResult) -> Table:
    from rich.table import Table

    from sandbox.eval.headline import headline

    s = result.summary
    table = Table(title=f"run {result.run_id}")
    for col in ("group", "n", "solved", "unsolved", "unsure", "pass rate", "95% CI"):
        table.add_column(col, justify="left" if col == "group" else "right")
    rows = [*s.groups.items(), ("all", s)]
    for name, r in rows:
        head = headline(r)  # n/a over no episode, never 0.0% with an interval
        table.add_row(
            name,
            str(r.n),
            str(r.solved),
            str(r.unsolved),
            str(r.unsure),
            "n/a" if head.pass_rate is None else f"{head.pass_rate:.1%}",
            "" if head.low is None else f"{head.low:.1%} - {head.high:.1%}",
        )
    if s.by_status:
        table.caption = "by status: " + ", ".join(f"{k} {v}" for k, v in s.by_status.items())
    return table
