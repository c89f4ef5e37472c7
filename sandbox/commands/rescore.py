"""``sandbox rescore``: recompute the scores of an old run with the current evaluator.

sandbox rescore runs/<id>
sandbox rescore runs/<id> --protocol toolbench --judge gpt-4o-mini
sandbox rescore --teval work_dirs/<model>/      # T-Eval's own prediction files, T-Eval's table
sandbox rescore --ultratool predictions/English-dataset/<model>/
sandbox rescore --tooleyes <model>.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from sandbox.commands import COMMANDS
from sandbox.commands.benchmark_tables import (
    add_benchmark_flags,
    benchmark_mode,
    score_benchmark_files,
)
from sandbox.commands.console import stdout_console
from sandbox.commands.eval import (
    add_common_options,
    eval_settings,
    evaluate_blocking,
    judge_failure_exit,
    report_judge_errors,
)
from sandbox.errors import RunError
from sandbox.eval.headline import headline
from sandbox.eval.report import print_table, write_report
from sandbox.store.input_files import read_json


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "rescore",
        help=COMMANDS["rescore"].help,
        description="Re-label and re-score every trajectory of a run (no agent model, no tools) "
        "and rewrite scores.json, report.md and the plots; prints the old and new pass rate.",
    )
    parser.add_argument("run", metavar="RUN", nargs="?", help="run folder (runs/<run-id>)")
    add_common_options(parser, rescore=True)
    add_benchmark_flags(parser)
    parser.set_defaults(handler=handle)


def _old_pass_rate(run: Path) -> float | None:
    """The pass rate the run's earlier ``scores.json`` held (None when unknown, or over no
    episode)."""
    try:
        data = read_json(run / "scores.json")
    except ValueError:  # absent, a FIFO, a device, not JSON: InputFileError
        return None
    rate = data.get("pass_rate") or data.get("summary", {}).get("pass_rate")
    while isinstance(rate, dict):
        if rate.get("n") == 0:
            return None
        rate = rate.get("pass_rate", rate.get("value"))
    return float(rate) if isinstance(rate, (int, float)) else None


def handle(args: argparse.Namespace) -> int:
    settings = eval_settings(args)
    mode = benchmark_mode(args)
    if mode is not None:
        return score_benchmark_files(mode, args, settings.reason_similarity, settings.json_line)
    run = Path(args.run)
    if not run.is_dir():
        raise RunError(f"no run folder at {run} (pass the folder runs/<run-id>)")
    old = _old_pass_rate(run)
    scores = evaluate_blocking(args.run, settings)
    write_report(run, scores, plots=settings.plots)
    new = headline(scores.pass_rate).pass_rate
    if settings.json_line:
        line = {
            "run": str(run),
            "protocol": scores.protocol,
            "old_pass_rate": old,
            "pass_rate": None if new is None else round(new, 6),
        }
        print(json.dumps(line))
    else:
        console = stdout_console()
        print_table(scores, console)
        before = "unknown or n/a" if old is None else f"{old:.1%}"
        after = "n/a" if new is None else f"{new:.1%}"
        console.print(
            f"pass rate: {before} before, {after} with the current evaluator "
            f"(protocol {scores.protocol})"
        )
    return judge_failure_exit(report_judge_errors(scores))
