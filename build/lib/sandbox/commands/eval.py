"""``sandbox eval``: recompute every score of a past run and write its report.

sandbox eval runs/<id>
sandbox eval runs/<id> --reference runs/<other>        # + win rate and paired test
sandbox eval runs/<id> --judge openai:gpt-4o-mini@https://api.openai.com/v1
sandbox eval runs/<id> --protocol toolbench --judge gpt-4o-mini   # ToolEval's SoPR
sandbox eval runs/<id> --json                           # one summary line on stdout

Exit codes: 0 done; 1 when the judge could not answer for some episodes (the scores are
written without them and list them; a re-run asks only those again, the rest comes from the
judge's cache); 2 for bad options or an unreachable judge.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from sandbox.commands import COMMANDS
from sandbox.commands.judge_options import (
    JUDGE_CACHE_FILE,
    add_protocol_options,
    judge_errors,
    open_judge,
    protocol_from_args,
    settings_from_args,
)
from sandbox.errors import RunError
from sandbox.eval.evaluate import RunScores, evaluate_run_async, run_blocking
from sandbox.eval.report import print_table, write_report
from sandbox.store import RunStore

__all__ = ["evaluate_from_args", "json_summary", "register", "report_judge_errors"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help=COMMANDS["eval"].help,
        description="Recompute pass rate, step-level scores, statistics and plots of a run "
        "from its trajectories; writes scores.json, report.md and PNGs into the run folder.",
    )
    parser.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    parser.add_argument("--suite", default=None, help="suite folder (default: the run's)")
    parser.add_argument("--reference", metavar="RUN", default=None, help="run to compare against")
    add_common_options(parser)
    parser.set_defaults(handler=handle)


def add_common_options(parser: argparse.ArgumentParser) -> None:
    """What ``eval`` and ``rescore`` share beyond the run folder."""
    add_protocol_options(parser, cache_default=f"RUN/{JUDGE_CACHE_FILE}")
    parser.add_argument("--seed", type=int, default=None, help="bootstrap seed (default: run's)")
    parser.add_argument(
        "--reason-similarity",
        default="auto",
        metavar="KIND",
        help="how thoughts are compared for the reason score: auto (default: T-Eval's "
        "all-mpnet-base-v2 embeddings when the embeddings extra is installed, else lexical), "
        "embedding[:MODEL] or lexical",
    )
    parser.add_argument("--no-plots", action="store_true", help="skip the PNG plots")
    parser.add_argument("--json", action="store_true", help="print a one-line JSON summary")


def _similarity(spec: str) -> Any:
    from sandbox.eval.reason_score import thought_similarity

    kind, _, model = spec.partition(":")
    return thought_similarity(kind, model or None)


async def evaluate_from_args(args: argparse.Namespace) -> RunScores:
    """``evaluate_run_async`` with the protocol, judge and settings the options name."""
    protocol = protocol_from_args(args)
    similarity = _similarity(args.reason_similarity)
    async with open_judge(args, protocol, Path(args.run) / JUDGE_CACHE_FILE) as judge:
        return await evaluate_run_async(
            args.run,
            getattr(args, "suite", None),
            protocol=protocol,
            judge=judge,
            settings=settings_from_args(args),
            reference_run=getattr(args, "reference", None),
            seed=args.seed,
            similarity=similarity,
        )


def evaluate_blocking(args: argparse.Namespace) -> RunScores:
    """``evaluate_from_args`` run to completion (``run_blocking``: see there why)."""
    return run_blocking(evaluate_from_args(args))


def json_summary(scores: RunScores, run: str) -> dict[str, Any]:
    p = scores.pass_rate
    out: dict[str, Any] = {
        "run": run,
        "protocol": scores.protocol,
        "episodes": scores.episodes,
        "pass_rate": round(p.pass_rate.value, 6),
        "pass_rate_ci": [round(p.pass_rate.low, 6), round(p.pass_rate.high, 6)],
        "by_status": p.by_status,
    }
    if p.sample_rates:
        out["pass_rate_samples"] = [round(r, 6) for r in p.sample_rates]
        out["pass_rate_std"] = round(p.sample_std or 0.0, 6)
    if p.excluded:
        out["excluded"] = {k: len(v) for k, v in p.excluded.items()}
    if scores.reference is not None:
        w = scores.reference.win
        out["win_rate"] = round(w.win_rate.value, 6)
        out["tie_rate"] = round(w.tie_rate, 6)
        out["tooleval_win_rate"] = round(w.tooleval_win_rate.value, 6)
        out["mcnemar_p"] = round(scores.reference.paired.p_value, 6)
    if scores.judge is not None:
        out["judge_calls"] = scores.judge.calls
        out["judge_cost"] = round(scores.judge.cost, 6)
    return out


def report_judge_errors(scores: RunScores) -> list[str]:
    outcomes = scores.reference.win.outcomes if scores.reference is not None else []
    return judge_errors(scores.labels, outcomes)


def handle(args: Any) -> int:
    if not Path(args.run).is_dir():
        raise RunError(f"no run folder at {args.run} (pass the folder runs/<run-id>)")
    scores = evaluate_blocking(args)
    written = write_report(args.run, scores, plots=not args.no_plots)
    if RunStore.open(args.run).complete_if_finished():
        print(f"note: {args.run} had stored every episode; marked completed now", file=sys.stderr)
    failed = report_judge_errors(scores)
    if args.json:
        print(json.dumps(json_summary(scores, args.run), sort_keys=True))
    else:
        console = Console(file=sys.stdout)
        print_table(scores, console)
        for note in scores.notes:
            console.print(f"note: {note}")
        console.print("wrote " + ", ".join(p.name for p in written) + f" in {args.run}")
    return judge_failure_exit(failed)


def judge_failure_exit(failed: list[str]) -> int:
    """1 (with one line on stderr) when the judge failed somewhere, else 0."""
    if not failed:
        return 0
    shown = ", ".join(failed[:5]) + (f" and {len(failed) - 5} more" if len(failed) > 5 else "")
    print(
        f"error: the judge gave no valid answer for {len(failed)} item(s) ({shown}); they are "
        "left out of the scores and listed in the report. Run the command again to retry them "
        "(answered questions come from the judge cache).",
        file=sys.stderr,
    )
    return 1
