"""``sandbox compare``: several strategies on the same tasks, tools, faults and model.

sandbox compare --agents react,dfsdt,react@4 --model noisy-reference --seed 0
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from rich.table import Table

from sandbox.commands.run import add_run_options, config_from_args, output_console
from sandbox.compare.comparison import Comparison, run_comparison
from sandbox.compare.report import write_comparison_report

__all__ = ["comparison_table", "paired_table", "register", "win_rate_table"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help="run several agents under identical tool behaviour and compare them",
        description="Run every agent on the same suite, tasks, seed, faults and model; "
        "writes runs/compare-<id>/ with one run folder per agent and comparison.json.",
    )
    parser.add_argument(
        "--agents", required=True, help="comma-separated agents, e.g. react,dfsdt,react@4"
    )
    add_run_options(parser)
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    agents = [a for a in args.agents.replace(" ", ",").split(",") if a]
    config = config_from_args(args, agent=agents[0] if agents else "react")
    comparison = run_comparison(config, agents, env=os.environ)
    console = output_console(sys.stderr if args.json else sys.stdout)
    console.print(comparison_table(comparison))
    if comparison.win_rates:
        console.print(win_rate_table(comparison))
    if comparison.paired:
        console.print(paired_table(comparison))
    if comparison.path:
        write_comparison_report(comparison, plots=not args.no_plots)
    console.print(f"comparison folder: {comparison.path}")
    if args.json:
        line = {
            "comparison": comparison.path,
            "pass_rate": {s.agent: round(s.pass_rate, 6) for s in comparison.strategies},
            "runs": {s.agent: s.run for s in comparison.strategies},
            "win_rate": {
                row: {col: round(c.win_rate.value, 6) for col, c in cols.items()}
                for row, cols in comparison.win_rates.items()
            },
            "mcnemar_p": {f"{p.a} vs {p.b}": round(p.p_value, 6) for p in comparison.paired},
        }
        sys.stdout.write(json.dumps(line) + "\n")
    return 0


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
            s.agent,
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
    names = [s.agent for s in comparison.strategies]
    table = Table(title="win rate, row against column (ToolEval rules; ties count half)")
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
