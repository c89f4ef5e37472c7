"""``sandbox probe``: T-Eval style teacher-forced probes of a model on a suite's reference paths.

sandbox probe --model reference                 # offline: scores 1.0 on every dimension
sandbox probe --model noisy-reference:0.3 --json
sandbox probe --model qwen-7b --suite scenarios/default --tasks 'g1_*' --out probe.json

For every task: the next step after each reference prefix, a whole plan up front, and a verdict
(A–E) on each recorded response of the reference path, scored with the step-level metrics
(docs/evaluation.md). The offline models answer plan and review questions through
``sandbox.eval.probe.ProbeOracle``, from the task's reference plan.
"""

from __future__ import annotations

import argparse
import asyncio
import fnmatch
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from agents.model import Model
from mock_tools import SuiteError, Task
from mock_tools.validate import load_valid_suite
from sandbox.commands import COMMANDS
from sandbox.errors import ConfigError
from sandbox.eval.probe import ProbeOracle, ProbeReport, build_probes, run_probe
from sandbox.eval.reason_score import thought_similarity
from sandbox.models import build_models, resolve_model
from sandbox.models.remote import RemoteModels
from sandbox.store.config import RunConfig
from sandbox.store.defaults import DEFAULT_SUITE
from sandbox.store.suite_folder import suite_folder
from sandbox.tool_envs import open_tool_envs

__all__ = ["probe_suite", "register"]

DEFAULT_NOISE = 0.3


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "probe",
        help=COMMANDS["probe"].help,
        description="Ask a model, for every reference step prefix of every task, the next step, "
        "a whole plan and a review verdict, and score the answers.",
    )
    parser.add_argument("--model", required=True, help="model name (see models.yaml)")
    parser.add_argument("--suite", default=DEFAULT_SUITE, help="suite folder")
    parser.add_argument("--tasks", default=None, help="only task ids matching this glob")
    parser.add_argument("--seed", type=int, default=0, help="seed of the offline models")
    parser.add_argument("--concurrency", type=int, default=4, help="questions in flight")
    parser.add_argument(
        "--similarity",
        default="auto",
        metavar="KIND",
        help="how reason and understand are scored: auto (default: T-Eval's all-mpnet-base-v2 "
        "embeddings when the embeddings extra is installed, else lexical), embedding[:MODEL] "
        "or lexical",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON summary line")
    parser.add_argument("--out", default=None, help="write the full report (every answer) here")
    parser.set_defaults(handler=handle)


def _select(tasks: list[Task], pattern: str | None) -> list[Task]:
    if pattern is None:
        return tasks
    chosen = [t for t in tasks if fnmatch.fnmatchcase(t.id, pattern)]
    if not chosen:
        raise ConfigError(f"no task id matches {pattern!r}")
    return chosen


async def probe_suite(
    suite_path: str | Path,
    model_name: str,
    *,
    env: dict[str, str] | None = None,
    tasks: str | None = None,
    seed: int = 0,
    concurrency: int = 4,
    similarity: str = "lexical",
) -> ProbeReport:
    """Load the suite, resolve the model, ask every probe question and score the answers.

    ``similarity`` names the backend of ``reason`` and ``understand`` (``thought_similarity``)."""
    kind, _, model = similarity.partition(":")
    backend = thought_similarity(kind, model or None)
    try:
        suite = load_valid_suite(suite_folder(suite_path))
    except SuiteError as e:
        raise ConfigError(f"cannot load suite: {e}") from e
    selected = _select(suite.tasks, tasks)
    async with open_tool_envs(RunConfig(suite=str(suite_path)), suite) as tools:
        items = await build_probes(selected, suite.apis, tools)
    spec = resolve_model(model_name, env=env or {})
    provider = build_models(spec)
    by_id = {t.id: t for t in selected}
    models: dict[str, Model] = {}
    if spec.kind in ("reference", "noisy-reference"):
        rate = float(spec.params.get("rate", DEFAULT_NOISE)) if spec.kind != "reference" else 0.0
        for tid, task in by_id.items():
            models[tid] = ProbeOracle(
                task.reference,
                next_step=provider.for_episode(task, seed=seed, trial=0),
                rate=rate,
                seed=seed,
                task_id=tid,
            )
    elif isinstance(provider, RemoteModels):
        await provider.probe()
        models = dict.fromkeys(by_id, provider.model)
    else:
        raise ConfigError(
            f"model {model_name!r} cannot answer new questions (a replay only repeats a run); "
            "probe a live or offline reference model"
        )
    try:
        return await run_probe(
            items,
            models.__getitem__,
            suite.apis,
            model_name=model_name,
            concurrency=concurrency,
            similarity=backend,
        )
    finally:
        await provider.aclose()


def handle(args: argparse.Namespace) -> int:
    if args.concurrency < 1:
        raise ConfigError("--concurrency must be at least 1")
    report = asyncio.run(
        probe_suite(
            args.suite,
            args.model,
            env=dict(os.environ),
            tasks=args.tasks,
            seed=args.seed,
            concurrency=args.concurrency,
            similarity=args.similarity,
        )
    )
    if args.out:
        Path(args.out).write_text(report.model_dump_json(indent=2) + "\n", encoding="utf-8")
    if args.json:
        summary = {
            "model": report.model,
            "suite": str(args.suite),
            "similarity": report.similarity,
            "questions": report.questions,
            "errors": report.errors,
            "dimensions": {d: m.model_dump() for d, m in report.dimensions.items()},
        }
        sys.stdout.write(json.dumps(summary, sort_keys=False) + "\n")
    else:
        Console().print(_table(report))
    return 0


def _table(report: ProbeReport) -> Table:
    table = Table(title=f"probe: {report.model} ({report.questions} questions)")
    table.add_column("dimension")
    table.add_column("score", justify="right")
    table.add_column("n", justify="right")
    for name, m in report.dimensions.items():
        table.add_row(name, "—" if m.value is None else f"{m.value:.3f}", str(m.n))
    table.caption = f"reason and understand scored by: {report.similarity}"
    if report.errors:
        table.caption += f"; {report.errors} questions failed at the model endpoint (not scored)"
    return table
