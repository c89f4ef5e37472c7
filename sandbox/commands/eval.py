"""``sandbox eval``: recompute every score of a past run and write its report.

sandbox eval runs/<id>
sandbox eval runs/<id> --reference runs/<other>        # + win rate and paired test
sandbox eval runs/<id> --judge openai:gpt-4o-mini@https://api.openai.com/v1
sandbox eval runs/<id> --json                           # one summary line on stdout
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console

from agents.errors import ModelError
from sandbox.errors import ConfigError, ModelUnreachableError
from sandbox.eval.evaluate import RunScores, evaluate_run_async
from sandbox.eval.judge import Judge
from sandbox.eval.report import print_table, write_report
from sandbox.models import RequestCache, resolve_model
from sandbox.models.remote import openai_client

JUDGE_CACHE_FILE = "judge_cache.sqlite"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="recompute the scores and report of a run",
        description="Recompute pass rate, step-level scores, statistics and plots of a run "
        "from its trajectories; writes scores.json, report.md and PNGs into the run folder.",
    )
    parser.add_argument("run", metavar="RUN", help="run folder (runs/<run-id>)")
    parser.add_argument("--suite", default=None, help="suite folder (default: the run's)")
    parser.add_argument(
        "--judge",
        metavar="MODEL",
        default=None,
        help="LLM judge for answers without checks: an alias from models.yaml or "
        "openai:<model>@<base_url>",
    )
    parser.add_argument("--judge-samples", type=int, default=3, help="votes per question (K)")
    parser.add_argument("--judge-rounds", type=int, default=1, help="rounds of answer comparison")
    parser.add_argument(
        "--judge-cache",
        default=None,
        help=f"SQLite cache of judge answers (default: RUN/{JUDGE_CACHE_FILE})",
    )
    parser.add_argument("--no-judge-cache", action="store_true", help="always ask the judge")
    parser.add_argument("--reference", metavar="RUN", default=None, help="run to compare against")
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
    parser.set_defaults(handler=handle)


def build_judge_model(name: str) -> Any:
    """An OpenAI-compatible client for the judge, resolved through the model registry."""
    spec = resolve_model(name, env=os.environ)
    if not spec.remote or not spec.model or not spec.base_url:
        raise ConfigError(
            f"the judge must be an OpenAI-compatible model (got {name!r}, kind {spec.kind}); "
            "use an alias such as gpt-4o-mini or openai:<model>@<base_url>"
        )
    return openai_client(spec)


def _similarity(spec: str) -> Any:
    from sandbox.eval.reason_score import thought_similarity

    kind, _, model = spec.partition(":")
    return thought_similarity(kind, model or None)


async def _evaluate(args: Any) -> RunScores:
    if args.judge is None:
        return await evaluate_run_async(
            args.run,
            args.suite,
            reference_run=args.reference,
            seed=args.seed,
            similarity=_similarity(args.reason_similarity),
        )
    if args.judge_samples < 1 or args.judge_rounds < 1:
        raise ConfigError("--judge-samples and --judge-rounds must be at least 1")
    model = build_judge_model(args.judge)
    cache = None
    if not args.no_judge_cache:
        cache = RequestCache(args.judge_cache or Path(args.run) / JUDGE_CACHE_FILE)
    try:
        try:
            await model.probe()
        except ModelError as e:
            raise ModelUnreachableError(
                f"judge {args.judge!r} is unreachable: {e}\n  start an OpenAI-compatible server "
                "or point --judge at another one (openai:<model>@<base_url>)"
            ) from e
        judge = Judge(model, cache=cache, samples=args.judge_samples, rounds=args.judge_rounds)
        return await evaluate_run_async(
            args.run,
            args.suite,
            judge=judge,
            reference_run=args.reference,
            seed=args.seed,
            similarity=_similarity(args.reason_similarity),
        )
    finally:
        await model.aclose()
        if cache is not None:
            cache.close()


def json_summary(scores: RunScores, run: str) -> dict[str, Any]:
    p = scores.pass_rate
    out: dict[str, Any] = {
        "run": run,
        "episodes": scores.episodes,
        "pass_rate": round(p.pass_rate.value, 6),
        "pass_rate_ci": [round(p.pass_rate.low, 6), round(p.pass_rate.high, 6)],
        "by_status": p.by_status,
    }
    if scores.reference is not None:
        w = scores.reference.win
        out["win_rate"] = round(w.win_rate.value, 6)
        out["tooleval_win_rate"] = round(w.tooleval_win_rate.value, 6)
        out["mcnemar_p"] = round(scores.reference.paired.p_value, 6)
    if scores.judge is not None:
        out["judge_calls"] = scores.judge.calls
    return out


def handle(args: Any) -> int:
    scores = asyncio.run(_evaluate(args))
    written = write_report(args.run, scores, plots=not args.no_plots)
    if args.json:
        print(json.dumps(json_summary(scores, args.run), sort_keys=True))
        return 0
    console = Console(file=sys.stdout)
    print_table(scores, console)
    for note in scores.notes:
        console.print(f"note: {note}")
    console.print("wrote " + ", ".join(p.name for p in written) + f" in {args.run}")
    return 0
