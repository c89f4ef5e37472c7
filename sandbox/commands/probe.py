"""``sandbox probe``: T-Eval style teacher-forced probes of a model on a suite's reference paths.

sandbox probe --model reference                 # offline: scores 1.0 on every dimension
sandbox probe --model noisy-reference:0.3 --json
sandbox probe --model qwen-7b --suite scenarios/default --tasks 'g1_*' --out probe.json

For every task: the next step after each reference prefix, a whole plan up front, and a verdict
(A–E) on each recorded response of the reference path, scored with the step-level metrics
(docs/evaluation.md). The offline models answer plan and review questions through
``sandbox.probe.oracle.ProbeOracle``, from the task's reference plan; which models can be
probed, and how, the model kind says (``ModelKind.questions``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from rich.table import Table

from sandbox.commands import COMMANDS
from sandbox.commands.console import stdout_console
from sandbox.errors import ConfigError
from sandbox.probe.runner import probe_suite
from sandbox.probe.scoring import ProbeReport
from sandbox.store.defaults import DEFAULT_SUITE

__all__ = ["register"]


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
    parser.add_argument(
        "--step-protocol",
        action="append",
        default=[],
        metavar="NAME",
        dest="step_protocols",
        help="also score the answers by a reference step protocol's own arithmetic, repeatable or "
        "comma-separated: teval, teval-v1 or ultratool (default: the probe's own dimensions only)",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON summary line")
    parser.add_argument("--out", default=None, help="write the full report (every answer) here")
    parser.set_defaults(handler=handle)


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
            step_protocols=[
                name.strip()
                for item in args.step_protocols
                for name in item.split(",")
                if name.strip()
            ],
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
        if report.step_protocols:
            summary["step_protocols"] = {
                name: {d: m.model_dump() for d, m in dims.items()}
                for name, dims in report.step_protocols.items()
            }
        sys.stdout.write(json.dumps(summary, sort_keys=False) + "\n")
    else:
        console = stdout_console()
        console.print(_table(report))
        for name, dims in report.step_protocols.items():
            console.print(_table(report, name, dims))
    return 0


def _table(report: ProbeReport, protocol: str = "", dims: dict[str, Any] | None = None) -> Table:
    title = f"probe: {report.model} ({report.questions} questions)"
    table = Table(title=title + (f", step protocol {protocol}" if protocol else ""))
    table.add_column("dimension")
    table.add_column("score", justify="right")
    table.add_column("n", justify="right")
    for name, m in (report.dimensions if dims is None else dims).items():
        table.add_row(name, "—" if m.value is None else f"{m.value:.3f}", str(m.n))
    table.caption = f"reason and understand scored by: {report.similarity}"
    if report.errors:
        table.caption += f"; {report.errors} questions failed at the model endpoint (not scored)"
    return table
