"""``sandbox replay``: re-execute a run offline and check it is reproduced exactly.

sandbox replay runs/<id>                       # agent-level: the recorded turns, same agent
sandbox replay runs/<id> --calls               # re-issue every recorded tool call, every branch
sandbox replay runs/<id> --task T --until-step K --then-model M [--then-agent A]   # fork
"""

from __future__ import annotations

import json
from typing import Any

from rich.table import Table

from sandbox.commands import COMMANDS
from sandbox.commands.console import stdout_console
from sandbox.errors import ConfigError
from sandbox.replay import ReplayReport, fork_run, replay_run


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "replay",
        help=COMMANDS["replay"].help,
        description="Re-execute the trajectories of a run with the recorded assistant turns "
        "against the suite's mock tools; exit 1 on any divergence. Needs no model and no network.",
    )
    parser.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    parser.add_argument("--tasks", nargs="*", default=[], help="task ids or globs (default: all)")
    parser.add_argument(
        "--calls",
        action="store_true",
        help="only re-issue every recorded tool call (all branches) and compare observations",
    )
    parser.add_argument("--out", default=None, help="keep the replayed run in this folder")
    fork = parser.add_argument_group("fork: replay the first steps, then continue live")
    fork.add_argument("--task", default=None, help="the task to fork")
    fork.add_argument("--trial", type=int, default=None, help="its trial (default 0)")
    fork.add_argument("--until-step", type=int, default=None, metavar="K", help="steps to replay")
    fork.add_argument("--then-model", default=None, metavar="M", help="model that continues")
    fork.add_argument("--then-agent", default=None, metavar="A", help="agent (default: the run's)")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.set_defaults(handler=handle)


FORK_FLAGS = ("task", "trial", "until_step", "then_model", "then_agent")
"""Any of these given makes the command a fork (which then needs the first, third and fourth)."""


def handle(args: Any) -> int:
    if any(getattr(args, name) is not None for name in FORK_FLAGS):
        return _fork(args)
    report = replay_run(
        args.run, tasks=args.tasks, mode="calls" if args.calls else "agent", out=args.out
    )
    if args.json:
        print(json.dumps(report.model_dump(mode="json"), sort_keys=True))
    else:
        _print(report)
    return 0 if report.ok else 1


def _fork(args: Any) -> int:
    missing = [
        flag
        for flag, value in (
            ("--task", args.task),
            ("--until-step", args.until_step),
            ("--then-model", args.then_model),
        )
        if value is None
    ]
    if missing:
        raise ConfigError(
            f"a fork needs {', '.join(missing)} (with --task, --until-step, --then-model)"
        )
    result = fork_run(
        args.run,
        task=args.task,
        trial=args.trial or 0,
        until_step=args.until_step,
        then_model=args.then_model,
        then_agent=args.then_agent,
        out=args.out,
    )
    if args.json:
        print(json.dumps(result.json_summary(), sort_keys=True))
    else:
        print(f"forked {args.task} after {args.until_step} steps into {result.path}")
        print(f"status: {', '.join(f'{k}={v}' for k, v in result.summary.by_status.items())}")
    return 0


def _print(report: ReplayReport) -> None:
    console = stdout_console()
    if report.suite_changed:
        console.print("[yellow]note: the suite changed since this run was recorded[/yellow]")
    if report.unrecorded:
        shown = ", ".join(report.unrecorded[:5]) + (", ..." if len(report.unrecorded) > 5 else "")
        console.print(
            f"note: {len(report.unrecorded)} episode(s) of the run have no trajectory, nothing "
            f"to replay: {shown}"
        )
    bad = [v for v in report.verdicts if not v.ok]
    if bad:
        table = Table(title="divergent episodes")
        for col in ("task", "trial", "first difference"):
            table.add_column(col)
        for v in bad:
            table.add_row(
                v.scenario_id, str(v.trial), v.first_diff.describe() if v.first_diff else ""
            )
        console.print(table)
    verdict = "REPRODUCED" if report.ok else "DIVERGED"
    console.print(
        f"{verdict}: {report.episodes - report.divergent}/{report.episodes} episodes identical, "
        f"{report.calls_matched}/{report.calls_checked} tool observations matched "
        f"({report.calls_exact} with identical text) "
        f"({report.mode} replay of {report.run})"
    )
