"""``sandbox run``: run an agent with a model on a suite and store a scored run folder.

sandbox run --suite scenarios/default --agent dfsdt --model noisy-reference --seed 0
sandbox run --model qwen-7b --tasks 'g1-*' --concurrency 8
sandbox run --resume runs/<id>
sandbox run --json        # one summary line on stdout, progress on stderr
sandbox run --mcp-server http://127.0.0.1:8765/mcp --record-into recorded/   # any MCP server
sandbox run --executor ray --ray-address 10.0.0.5:6379                     # on a Ray cluster
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import TYPE_CHECKING, Any, TextIO

from agents.presets import PRESETS
from mock_tools.miss import MISS_POLICIES
from sandbox.commands import COMMANDS
from sandbox.commands.agent_options import add_agent_options, agent_options_from_args
from sandbox.errors import ConfigError
from sandbox.run.executor import EXECUTORS
from sandbox.store.defaults import (
    DEFAULT_AGENT,
    DEFAULT_CONCURRENCY,
    DEFAULT_MODEL,
    DEFAULT_OUT,
    DEFAULT_SUITE,
)

if TYPE_CHECKING:  # the parser needs none of these; running imports them (start-up stays fast)
    from rich.console import Console
    from rich.table import Table

    from sandbox.run import RunResult
    from sandbox.store.config import RunConfig

__all__ = [
    "add_run_options",
    "config_from_args",
    "output_console",
    "register",
    "result_table",
]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "run",
        help=COMMANDS["run"].help,
        description="Run an agent with a model on a suite; writes runs/<run-id>/.",
    )
    add_run_options(parser)
    parser.add_argument(
        "--agent",
        default=DEFAULT_AGENT,
        help=f"react | dfsdt | react@N (default {DEFAULT_AGENT}; `make run` passes dfsdt)",
    )
    parser.add_argument("--run-id", default=None, help="fixed run id (default: generated)")
    parser.add_argument(
        "--resume", metavar="RUN", default=None, help="continue the run in this folder"
    )
    parser.set_defaults(handler=handle)


def add_run_options(parser: argparse.ArgumentParser) -> None:
    """The options ``run`` and ``compare`` share."""
    parser.add_argument("--suite", default=DEFAULT_SUITE, help="suite folder")
    parser.add_argument(
        "--model",
        default=None,
        help="alias from models.yaml (qwen-7b, gpt-4o-mini, reference, noisy-reference[:RATE]) "
        "or openai:<model>@<base_url>",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the offline models and fault draws (default 0)"
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=DEFAULT_CONCURRENCY,
        help=f"episodes run at once (default {DEFAULT_CONCURRENCY})",
    )
    parser.add_argument("--trials", type=int, default=1, help="episodes per task")
    parser.add_argument(
        "--tasks", action="append", default=[], help="task ids or globs (repeat or comma-separate)"
    )
    budget = parser.add_argument_group(
        "budget", "per episode; running out ends it as budget_exhausted"
    )
    budget.add_argument(
        "--max-model-calls", type=int, default=None, help="model calls (default 200, ToolBench's)"
    )
    budget.add_argument("--max-tool-calls", type=int, default=None, help="tool calls")
    budget.add_argument("--max-tokens", type=int, default=None, help="prompt + completion tokens")
    budget.add_argument("--max-seconds", type=float, default=None, help="wall-clock seconds")
    budget.add_argument(
        "--max-cost", type=float, default=None, metavar="USD", help="model cost of one episode"
    )
    budget.add_argument(
        "--max-run-cost",
        type=float,
        default=None,
        metavar="USD",
        help="cost of the run: no episode starts once it is spent (the run stays resumable)",
    )
    budget.add_argument(
        "--max-depth",
        type=int,
        default=None,
        help="steps on one path: ReAct stops there, DFSDT backtracks (its default: 6)",
    )
    add_agent_options(parser)
    parser.add_argument(
        "--preset",
        default=None,
        choices=PRESETS.names(),
        help="fill the agent options and budgets not given with a preset's values "
        "(toolbench: ToolBench's DFSDT settings, see docs/agents.md)",
    )
    parser.add_argument(
        "--model-cache",
        default=None,
        metavar="PATH",
        help="SQLite cache of a remote model's answers: a re-run makes no repeated call",
    )
    parser.add_argument(
        "--out", default=DEFAULT_OUT, help=f"folder for run folders (default {DEFAULT_OUT}/)"
    )
    tools = parser.add_argument_group("tools")
    tools.add_argument(
        "--tools-url",
        default=None,
        help="base URL of a running mock_tools server (default: in process); every episode "
        "sends its own X-Sandbox-Session, so its occurrence counts are its own",
    )
    tools.add_argument(
        "--miss-policy",
        default="error",
        choices=list(MISS_POLICIES),
        help="what a call without a recording gets (default error; simulate needs --simulator)",
    )
    tools.add_argument(
        "--simulator",
        default=None,
        metavar="MODEL",
        help="the model that plays missing APIs: schema-sim (offline) or any model name",
    )
    tools.add_argument(
        "--overlay",
        default=None,
        metavar="PATH",
        help="where simulated/upstream responses are kept (default: the suite's overlay.sqlite)",
    )
    tools.add_argument("--upstream-url", default=None, help="real API for --miss-policy upstream")
    tools.add_argument(
        "--fault-rate", type=float, default=None, help="share of tool calls that meet a fault (0-1)"
    )
    tools.add_argument(
        "--fault-seed", type=int, default=None, help="seed of the fault draws (default: --seed)"
    )
    tools.add_argument(
        "--mcp-server",
        default=None,
        metavar="URL|stdio:CMD",
        help="run on the tools an MCP server lists: http(s)://HOST/mcp or 'stdio:COMMAND ARGS' "
        "(--suite may then be a task file of queries)",
    )
    tools.add_argument(
        "--record-into",
        default=None,
        metavar="SUITE_DIR",
        help="with --mcp-server: write its tool docs, the tasks and every answer into this "
        "suite (new or existing), so replays and later runs work offline",
    )
    execution = parser.add_argument_group("execution")
    execution.add_argument(
        "--executor",
        default="local",
        choices=EXECUTORS.names(),
        help="where episodes run: local (asyncio here) or ray (Ray actors; the ray extra)",
    )
    execution.add_argument(
        "--ray-address",
        default=None,
        metavar="ADDR",
        help="with --executor ray: the cluster to join (default: a private local Ray)",
    )
    parser.add_argument("--json", action="store_true", help="print a one-line JSON summary")
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots of the report")


def config_from_args(args: argparse.Namespace, **overrides: Any) -> RunConfig:
    """A ``RunConfig`` from parsed options; invalid values become a ``ConfigError``."""
    values: dict[str, Any] = {
        "suite": args.suite,
        "agent": getattr(args, "agent", DEFAULT_AGENT),
        "model": args.model or DEFAULT_MODEL,
        "seed": args.seed,
        "concurrency": args.concurrency,
        "trials": args.trials,
        "tasks": list(args.tasks),
        "max_tool_calls": args.max_tool_calls,
        "max_tokens": args.max_tokens,
        "max_seconds": args.max_seconds,
        "max_cost": args.max_cost,
        "max_run_cost": args.max_run_cost,
        "max_depth": args.max_depth,
        "agent_options": agent_options_from_args(args),
        "preset": getattr(args, "preset", None),
        "model_cache": getattr(args, "model_cache", None),
        "out": args.out,
        "run_id": getattr(args, "run_id", None),
        "tools_url": args.tools_url,
        "mcp_server": args.mcp_server,
        "record_into": args.record_into,
        "executor": args.executor,
        "ray_address": args.ray_address,
        "miss_policy": args.miss_policy,
        "simulator": args.simulator,
        "overlay": args.overlay,
        "upstream_url": args.upstream_url,
        "fault_rate": args.fault_rate,
        "fault_seed": args.fault_seed,
    }
    if args.max_model_calls is not None:
        values["max_model_calls"] = args.max_model_calls
    values.update(overrides)
    from pydantic import ValidationError

    from sandbox.store.config import RunConfig

    try:
        return RunConfig.model_validate(values)
    except ValidationError as e:
        problems = "; ".join(_problem(err) for err in e.errors())
        raise ConfigError(f"invalid options: {problems}") from e


def _problem(err: Any) -> str:
    """One validation error as the flag it is about (a whole-config rule names its flags)."""
    msg = str(err["msg"]).removeprefix("Value error, ")
    if not err["loc"]:
        return msg
    return f"--{'-'.join(str(p) for p in err['loc']).replace('_', '-')}: {msg}"


def handle(args: argparse.Namespace) -> int:
    from sandbox.run import resolve_strategy, resume_run, run_suite
    from sandbox.run.runner import SECRET_FIELDS

    if args.resume:
        given = {f: getattr(args, f, None) for f in ("max_run_cost", *SECRET_FIELDS)}
        overrides = {k: v for k, v in given.items() if v is not None}
        result = resume_run(
            args.resume, env=os.environ, plots=not args.no_plots, overrides=overrides
        )
    else:
        config = config_from_args(args)
        resolve_strategy(config)  # an unknown agent or option fails before anything runs
        result = run_suite(config, env=os.environ, plots=not args.no_plots)
    show(result, as_json=args.json)
    return 0


def show(result: RunResult, *, as_json: bool) -> None:
    """The table (stdout, or stderr under --json) and the JSON summary line (stdout)."""
    console = output_console(sys.stderr if as_json else sys.stdout)
    console.print(result_table(result))
    u = result.usage
    console.print(
        f"episodes {result.episodes} (ran {result.ran})  status {result.status}  "
        f"model calls {u.model_calls}  tool calls {u.tool_calls}  tokens {u.tokens}  "
        f"cost {u.cost:.4f} USD  infra errors {result.summary.infra_errors}"
    )
    if result.note:
        console.print(f"note: {result.note}")
    console.print(f"run folder: {result.path}")
    if as_json:
        sys.stdout.write(json.dumps(result.json_summary(), separators=(", ", ": ")) + "\n")
        sys.stdout.flush()


def output_console(stream: TextIO) -> Console:
    """A console for tables: the terminal's width, or a wide fixed one when piped (CI, logs)."""
    from rich.console import Console

    console = Console(file=stream, highlight=False)
    if not console.is_terminal:
        console = Console(file=stream, highlight=False, width=140)
    return console


def result_table(result: RunResult) -> Table:
    from rich.table import Table

    s = result.summary
    table = Table(title=f"run {result.run_id}")
    for col in ("group", "n", "solved", "unsolved", "unsure", "pass rate", "95% CI"):
        table.add_column(col, justify="left" if col == "group" else "right")
    rows = [*s.groups.items(), ("all", s)]
    for name, r in rows:
        table.add_row(
            name,
            str(r.n),
            str(r.solved),
            str(r.unsolved),
            str(r.unsure),
            f"{r.pass_rate.value:.1%}",
            f"{r.pass_rate.low:.1%} - {r.pass_rate.high:.1%}",
        )
    if s.by_status:
        table.caption = "by status: " + ", ".join(f"{k} {v}" for k, v in s.by_status.items())
    return table
