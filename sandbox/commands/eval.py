"""``sandbox eval``: recompute every score of a past run and write its report.

sandbox eval runs/<id>
sandbox eval runs/<id> --reference runs/<other>        # + win rate and paired test
sandbox eval runs/<id> --judge openai:gpt-4o-mini@https://api.openai.com/v1
sandbox eval runs/<id> --protocol toolbench --judge gpt-4o-mini   # ToolEval's SoPR
sandbox eval runs/<id> --json                           # one summary line on stdout
sandbox eval runs/<id> --config eval.yaml -C judge_samples=4   # settings from a file

Exit codes: 0 done; 1 when the judge could not answer for some episodes (the scores are
written without them and list them; a re-run asks only those again, the rest comes from the
judge's cache); 2 for bad options or an unreachable judge.
"""

from __future__ import annotations

import argparse
import json
import sys
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field

from sandbox.commands import COMMANDS
from sandbox.commands.config_files import add_config_flags, settings_from_args
from sandbox.commands.console import stdout_console
from sandbox.commands.judge_options import (
    JUDGE_CACHE_FILE,
    ScoringConfig,
    check_protocol,
    judge_errors,
    judge_settings,
    judge_tasks,
    open_judge,
    step_selection,
)
from sandbox.commands.settings_flags import add_settings_flags
from sandbox.errors import RunError
from sandbox.eval.evaluate import RunScores, evaluate_run_async, run_blocking
from sandbox.eval.headline import headline, rate_or_none
from sandbox.eval.nl_judge import judged_by
from sandbox.eval.report import print_table, write_report
from sandbox.eval.state_checks import CheckRate
from sandbox.store import RunStore
from sandbox.store.setting import Flag

__all__ = [
    "EvalSettings",
    "add_common_options",
    "eval_settings",
    "evaluate_blocking",
    "evaluate_settings",
    "json_summary",
    "register",
    "report_judge_errors",
]


class EvalSettings(ScoringConfig):
    """What ``eval`` and ``rescore`` do with a run: the protocol and judge, and the rest."""

    suite: Annotated[str | None, Flag(metavar="SUITE")] = Field(
        default=None, description="The suite folder (default: the run's)."
    )
    reference: Annotated[str | None, Flag(metavar="RUN")] = Field(
        default=None, description="A run to compute win rate and the paired test against."
    )
    seed: Annotated[int | None, Flag(metavar="SEED")] = Field(
        default=None, description="Bootstrap seed (default: the run's)."
    )
    reason_similarity: Annotated[str, Flag(metavar="KIND")] = Field(
        default="auto",
        description="How thoughts are compared for the reason score: auto (T-Eval's "
        "all-mpnet-base-v2 embeddings when the embeddings extra is installed, else lexical), "
        "embedding[:MODEL] or lexical.",
    )
    plots: Annotated[bool, Flag(name="--no-plots", help="skip the PNG plots")] = Field(
        default=True, description="Draw the PNG plots (--no-plots skips them)."
    )
    json_line: Annotated[bool, Flag(name="--json")] = Field(
        default=False, description="Print a one-line JSON summary."
    )


_RESCORE_EXCLUDES = ("suite", "reference")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help=COMMANDS["eval"].help,
        description="Recompute pass rate, step-level scores, statistics and plots of a run "
        "from its trajectories; writes scores.json, report.md and PNGs into the run folder.",
    )
    parser.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    add_common_options(parser)
    parser.set_defaults(handler=handle)


def add_common_options(parser: argparse.ArgumentParser, *, rescore: bool = False) -> None:
    """``EvalSettings`` as flags (``rescore`` takes neither ``--suite`` nor ``--reference``),
    ``--config`` and ``-C``."""
    add_settings_flags(parser, EvalSettings, exclude=_RESCORE_EXCLUDES if rescore else ())
    add_config_flags(parser)


def eval_settings(args: argparse.Namespace) -> EvalSettings:
    """The settings of ``args``; bad ones and a protocol without its judge fail here."""
    settings = settings_from_args(args, EvalSettings)
    check_protocol(settings)
    return settings


def _similarity(spec: str) -> Any:
    from sandbox.eval.steps.reason_score import thought_similarity

    kind, _, model = spec.partition(":")
    return thought_similarity(kind, model or None)


async def evaluate_settings(run: str, settings: EvalSettings) -> RunScores:
    """``evaluate_run_async`` of ``run`` with the protocol, judge and settings given."""
    protocol = check_protocol(settings)
    steps = step_selection(settings)
    similarity = _similarity(settings.reason_similarity)
    cache = Path(run) / JUDGE_CACHE_FILE
    tasks = partial(judge_tasks, [run, settings.reference], settings.suite)
    recorded = partial(judged_by, Path(run))  # a re-score from the record needs no endpoint
    async with open_judge(settings, protocol, cache, tasks, offline_ok=recorded) as judge:
        return await evaluate_run_async(
            run,
            settings.suite,
            protocol=protocol,
            judge=judge,
            settings=judge_settings(settings),
            reference_run=settings.reference,
            seed=settings.seed,
            similarity=similarity,
            steps=steps,
        )


def evaluate_blocking(run: str, settings: EvalSettings) -> RunScores:
    """``evaluate_settings`` run to completion (``run_blocking``: see there why)."""
    return run_blocking(evaluate_settings(run, settings))


def json_summary(scores: RunScores, run: str) -> dict[str, Any]:
    """The ``--json`` line: the headline (``pass_rate`` and ``pass_rate_ci`` null when no
    episode counts), then what else the evaluation found."""
    p = scores.pass_rate
    head = headline(p)
    out: dict[str, Any] = {
        "run": run,
        "protocol": scores.protocol,
        "episodes": scores.episodes,
        "n": head.n,
        "pass_rate": _rounded(head.pass_rate),
        "pass_rate_ci": (None if head.low is None else [_rounded(head.low), _rounded(head.high)]),
        "by_status": p.by_status,
    }
    if p.sample_rates:
        out["pass_rate_samples"] = [round(r, 6) for r in p.sample_rates]
        out["pass_rate_std"] = round(p.sample_std or 0.0, 6)
    if p.excluded:
        out["excluded"] = {k: len(v) for k, v in p.excluded.items()}
    if scores.state_checks is not None:
        out["state_checks"] = {r.check: check_line(r) for r in scores.state_checks.rates()}
    if p.user_failures:
        out["user_failures"] = p.user_failures
    if scores.reference is not None:
        w = scores.reference.win
        out["win_rate"] = _rounded(rate_or_none(w.win_rate))
        out["tie_rate"] = round(w.tie_rate, 6) if w.n else None
        out["tooleval_win_rate"] = _rounded(rate_or_none(w.tooleval_win_rate))
        out["mcnemar_p"] = round(scores.reference.paired.p_value, 6)
    warnings = [n for n in scores.notes if n.startswith("warning:")]
    if warnings:  # e.g. a reference run on another suite version (compare's line has them too)
        out["warnings"] = warnings
    if (nl := scores.nl_assertions) is not None:
        out["nl_assertions"] = {
            "judged": nl.judged,
            "met": nl.met,
            "unjudged": nl.unjudged,
            "skipped": nl.skipped,
        }
    if scores.judge is not None:
        out["judge"] = scores.judge.model
        out["judge_kind"] = scores.judge.kind
        out["judge_calls"] = scores.judge.calls
        out["judge_cost"] = round(scores.judge.cost, 6)
    return out


def check_line(rate: CheckRate) -> dict[str, Any]:
    """A state check in a ``--json`` line: its rate with the interval, the episodes passed and
    judged, and pass@k / pass^k (their values; ``scores.json`` has their intervals)."""
    iv = rate.rate
    return {
        "rate": _rounded(rate_or_none(iv)),
        "rate_ci": None if iv.n == 0 else [_rounded(iv.low), _rounded(iv.high)],
        "passed": rate.passed,
        "episodes": rate.episodes,
        "pass_at_k": {k: _rounded(iv.value) for k, iv in rate.pass_at_k.items()},
        "pass_hat_k": {k: _rounded(iv.value) for k, iv in rate.pass_hat_k.items()},
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def report_judge_errors(scores: RunScores) -> list[str]:
    outcomes = scores.reference.win.outcomes if scores.reference is not None else []
    return judge_errors(scores.labels, outcomes)


def handle(args: Any) -> int:
    settings = eval_settings(args)
    if not Path(args.run).is_dir():
        raise RunError(f"no run folder at {args.run} (pass the folder runs/<run-id>)")
    scores = evaluate_blocking(args.run, settings)
    written = write_report(args.run, scores, plots=settings.plots)
    if RunStore.open(args.run).complete_if_finished():
        print(f"note: {args.run} had stored every episode; marked completed now", file=sys.stderr)
    failed = report_judge_errors(scores)
    if settings.json_line:
        print(json.dumps(json_summary(scores, args.run), sort_keys=True))
        for note in scores.notes:  # stdout holds the one line; a warning still reaches the user
            if note.startswith("warning:"):
                print(note, file=sys.stderr)
    else:
        console = stdout_console()
        print_table(scores, console)
        for note in scores.notes:
            console.print(note if note.startswith("warning:") else f"note: {note}")
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
