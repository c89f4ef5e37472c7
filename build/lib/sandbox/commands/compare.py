"""``sandbox compare``: strategies side by side under identical tool behaviour, or existing runs.

sandbox compare --agents react,dfsdt,react@4 --model noisy-reference --seed 0
sandbox compare --runs runs/<reference> runs/<candidate> [--protocol toolbench --judge MODEL]

``--agents`` runs every strategy on the same tasks, tools, faults and model, then compares the
runs; ``--runs`` compares run folders that exist already (no new episode), pairing episodes by task
id. Both evaluate under ``--protocol`` (with ``--judge``). With two runs, the second is the
candidate and the first the reference: ``--json`` then holds the candidate's ``win_rate`` and
``tie_rate`` over the reference, beside each run's ``pass_rate``. Exit code 1 when the judge
could not answer for some items (listed; a re-run retries them).
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
from sandbox.commands.eval import judge_failure_exit
from sandbox.commands.judge_options import (
    JUDGE_CACHE_FILE,
    add_protocol_options,
    judge_errors,
    open_judge,
    protocol_from_args,
    settings_from_args,
)
from sandbox.commands.run import add_run_options, config_from_args, output_console
from sandbox.compare.comparison import (
    Comparison,
    compare_runs_async,
    run_comparison,
    runs_folder,
    write_comparison,
)
from sandbox.compare.report import write_comparison_report
from sandbox.errors import ConfigError, RunError
from sandbox.store.defaults import DEFAULT_SUITE

__all__ = ["comparison_table", "json_line", "paired_table", "register", "win_rate_table"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help=COMMANDS["compare"].help,
        description="--agents: run every agent on the same suite, tasks, seed, faults and "
        "model, into runs/compare-<id>/ (one run folder per agent) with comparison.json. "
        "--runs: compare existing run folders (the first is the reference), into "
        "runs/compare-runs-<hash>/.",
    )
    which = parser.add_mutually_exclusive_group(required=True)
    which.add_argument("--agents", help="comma-separated agents, e.g. react,dfsdt,react@4")
    which.add_argument(
        "--runs",
        nargs="+",
        metavar="RUN",
        help="existing run folders: the reference first, then the candidate(s)",
    )
    add_run_options(parser)
    add_protocol_options(parser, cache_default="the comparison folder's " + JUDGE_CACHE_FILE)
    parser.set_defaults(handler=handle, suite=None, seed=None)


def _compare(args: argparse.Namespace, runs: list[str], folder: Path) -> Comparison:
    """The comparison of ``runs`` under the protocol and judge of the options."""
    protocol = protocol_from_args(args)
    suite = args.suite if args.runs else (args.suite or DEFAULT_SUITE)

    async def go() -> Comparison:
        async with open_judge(args, protocol, folder / JUDGE_CACHE_FILE) as judge:
            return await compare_runs_async(
                runs,
                suite_path=suite,
                protocol=protocol,
                judge=judge,
                settings=settings_from_args(args),
                seed=args.seed,
            )

    return asyncio.run(go())


def handle(args: argparse.Namespace) -> int:
    protocol_from_args(args)  # bad protocol options fail before anything runs
    if args.runs:
        comparison = _existing(args)
    else:
        agents = [a for a in args.agents.replace(" ", ",").split(",") if a]
        overrides: dict[str, Any] = {"agent": agents[0] if agents else "react"}
        overrides["suite"] = args.suite or DEFAULT_SUITE
        overrides["seed"] = 0 if args.seed is None else args.seed
        config = config_from_args(args, **overrides)
        comparison = run_comparison(
            config,
            agents,
            env=os.environ,
            compare=lambda runs: _compare(args, runs, Path(runs[0]).parent),
        )
    console = output_console(sys.stderr if args.json else sys.stdout)
    console.print(comparison_table(comparison))
    if comparison.win_rates:
        console.print(win_rate_table(comparison))
    if comparison.paired:
        console.print(paired_table(comparison))
    for warning in comparison.warnings:
        console.print(f"warning: {warning}")
    if comparison.path:
        write_comparison_report(comparison, plots=not args.no_plots)
    console.print(f"comparison folder: {comparison.path}")
    if args.json:
        sys.stdout.write(json.dumps(json_line(comparison)) + "\n")
    labels = [lb for s in comparison.strategies for lb in s.labels]
    return judge_failure_exit(judge_errors(labels, comparison.outcomes))


def _existing(args: argparse.Namespace) -> Comparison:
    runs = list(dict.fromkeys(args.runs))
    if len(runs) < 2:
        raise ConfigError("--runs needs at least two different run folders: REFERENCE CANDIDATE")
    for run in runs:
        if not (Path(run) / "manifest.json").is_file():
            raise RunError(f"no run folder at {run} (a folder holding manifest.json)")
    folder = runs_folder(runs, args.out)
    folder.mkdir(parents=True, exist_ok=True)
    comparison = _compare(args, runs, folder)
    comparison.id = folder.name
    comparison.path = str(folder)
    write_comparison(comparison, folder)
    return comparison


def json_line(comparison: Comparison) -> dict[str, Any]:
    """The ``--json`` summary: per-run pass rates, the win-rate matrix, McNemar, and with two
    runs the candidate's ``win_rate`` and ``tie_rate`` over the reference."""
    line: dict[str, Any] = {
        "comparison": comparison.path,
        "protocol": comparison.protocol,
        "pass_rate": {s.name: round(s.pass_rate, 6) for s in comparison.strategies},
        "runs": {s.name: s.run for s in comparison.strategies},
        "win_rates": {
            row: {col: round(c.win_rate.value, 6) for col, c in cols.items()}
            for row, cols in comparison.win_rates.items()
        },
        "mcnemar_p": {f"{p.a} vs {p.b}": round(p.p_value, 6) for p in comparison.paired},
        "warnings": comparison.warnings,
    }
    std = {
        s.name: round(s.summary.sample_std, 6)
        for s in comparison.strategies
        if s.summary.sample_std is not None
    }
    if std:
        line["pass_rate_std"] = std
    cell, cand, ref = comparison.headline()
    if cell is not None:
        line |= {
            "candidate": cand,
            "reference": ref,
            "win_rate": round(cell.win_rate.value, 6),
            "tie_rate": round(cell.tie_rate, 6),
        }
    if comparison.judge is not None:
        line["judge_calls"] = comparison.judge.calls
        line["judge_cost"] = round(comparison.judge.cost, 6)
    return line


def comparison_table(comparison: Comparison) -> Table:
    """One row per strategy: pass rate (overall and per group), then mean costs per episode."""
    title = f"suite {comparison.suite}"
    if comparison.model:
        title += f" - model {comparison.model}"
    if comparison.seed is not None:
        title += f" - seed {comparison.seed}"
    table = Table(title=title)
    table.add_column("agent")
    table.add_column("n", justify="right")
    table.add_column("pass rate", justify="right")
    for group in comparison.groups:
        table.add_column(group, justify="right")
    for col in ("model calls", "tool calls", "tokens", "steps", "errors"):
        table.add_column(col, justify="right")
    for s in comparison.strategies:
        rate = s.summary.pass_rate
        groups = [
            f"{s.summary.groups[g].pass_rate.value:.1%}" if g in s.summary.groups else "-"
            for g in comparison.groups
        ]
        u = s.usage
        table.add_row(
            s.name or s.agent,
            str(s.summary.n),
            f"{rate.value:.1%} [{rate.low:.0%}-{rate.high:.0%}]",
            *groups,
            f"{s.per_episode(u.model_calls):.1f}",
            f"{s.per_episode(u.tool_calls):.1f}",
            f"{s.per_episode(u.tokens):.0f}",
            f"{s.per_episode(u.steps):.1f}",
            str(s.summary.infra_errors),
        )
    table.caption = "costs are means per episode; errors are infrastructure errors"
    return table


def win_rate_table(comparison: Comparison) -> Table:
    """``row`` as candidate against ``column``: win rate (ties as half) and W/L/T."""
    names = comparison.names
    tie_values = {c.tie_value for row in comparison.win_rates.values() for c in row.values()}
    ties = "ties count half" if tie_values == {0.5} else "ties count 0"
    table = Table(title=f"win rate, row against column (protocol {comparison.protocol}; {ties})")
    table.add_column("")
    for name in names:
        table.add_column(name, justify="right")
    for row in names:
        cells = []
        for col in names:
            cell = comparison.win_rates.get(row, {}).get(col)
            if cell is None:
                cells.append("-")
                continue
            iv = cell.win_rate
            cells.append(
                f"{iv.value:.0%} [{iv.low:.0%}-{iv.high:.0%}] {cell.wins}/{cell.losses}/{cell.ties}"
            )
        table.add_row(row, *cells)
    table.caption = "W/L/T = wins/losses/ties per episode"
    cell, cand, ref = comparison.headline()
    if cell is not None:
        table.caption += (
            f"; {cand} over {ref}: win rate {cell.win_rate.value:.1%}, tie rate {cell.tie_rate:.1%}"
        )
    return table


def paired_table(comparison: Comparison) -> Table:
    """Exact McNemar test for each pair: episodes only A solved, only B solved, p-value."""
    table = Table(title="paired test (exact McNemar on solved episodes)")
    for col in ("A", "B", "n", "only A", "only B", "both", "neither", "p"):
        table.add_column(col, justify="right" if col not in ("A", "B") else "left")
    for p in comparison.paired:
        table.add_row(
            p.a,
            p.b,
            str(p.n),
            str(p.only_a),
            str(p.only_b),
            str(p.both),
            str(p.neither),
            f"{p.p_value:.3g}",
        )
    return table
