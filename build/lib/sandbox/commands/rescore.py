"""``sandbox rescore``: recompute the scores of an old run with the current evaluator.

sandbox rescore runs/<id>
sandbox rescore runs/<id> --protocol toolbench --judge gpt-4o-mini
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from sandbox.commands import COMMANDS
from sandbox.commands.eval import (
    add_common_options,
    evaluate_blocking,
    judge_failure_exit,
    report_judge_errors,
)
from sandbox.errors import RunError
from sandbox.eval.report import print_table, write_report


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help=COMMANDS["rescore"].help,
        description="Re-label and re-score every trajectory of a run (no agent model, no tools) "
        "and rewrite scores.json, report.md and the plots; prints the old and new pass rate.",
    )
    parser.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    add_common_options(parser)
    parser.set_defaults(handler=handle)


def _old_pass_rate(run: Path) -> float | None:
    try:
        data = json.loads((run / "scores.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    rate = data.get("pass_rate") or data.get("summary", {}).get("pass_rate")
    while isinstance(rate, dict):
        rate = rate.get("pass_rate", rate.get("value"))
    return float(rate) if isinstance(rate, (int, float)) else None


def handle(args: argparse.Namespace) -> int:
    run = Path(args.run)
    if not run.is_dir():
        raise RunError(f"no run folder at {run} (pass the folder runs/<run-id>)")
    old = _old_pass_rate(run)
    scores = evaluate_blocking(args)
    write_report(run, scores, plots=not args.no_plots)
    new = scores.pass_rate.pass_rate.value
    if args.json:
        line = {
            "run": str(run),
            "protocol": scores.protocol,
            "old_pass_rate": old,
            "pass_rate": round(new, 6),
        }
        print(json.dumps(line))
    else:
        console = Console(file=sys.stdout)
        print_table(scores, console)
        before = "unknown" if old is None else f"{old:.1%}"
        console.print(
            f"pass rate: {before} before, {new:.1%} with the current evaluator "
            f"(protocol {scores.protocol})"
        )
    return judge_failure_exit(report_judge_errors(scores))
