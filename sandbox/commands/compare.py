"""``sandbox compare``: strategies side by side under identical tool behaviour, or existing runs.

sandbox compare --agents react,dfsdt,react@4 --model noisy-reference --seed 0
sandbox compare --runs runs/<reference> runs/<candidate> [--protocol toolbench --judge MODEL]
sandbox compare --runs runs/<a> runs/<b> --step-protocol default   # + step scores side by side

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
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, model_validator
from rich.table import Table

from sandbox.commands import COMMANDS
from sandbox.commands.config_files import check_unredacted, settings_from_args
from sandbox.commands.console import output_console
from sandbox.commands.eval import check_line, judge_failure_exit
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
from sandbox.commands.run import add_run_options, print_config
from sandbox.compare.comparison import (
    Comparison,
    StrategyResult,
    agent_configs,
    agent_spec,
    compare_runs_async,
    run_comparison,
    runs_folder,
    write_comparison,
)
from sandbox.compare.report import state_check_rates, write_comparison_report
from sandbox.errors import ConfigError, RunError
from sandbox.eval.headline import headline
from sandbox.eval.judge import judge_text
from sandbox.eval.state_checks import check_cell
from sandbox.run.runner import load_run_suite
from sandbox.store.config import RunConfig
from sandbox.store.setting import Flag
from sandbox.store.suite_folder import suite_folder

__all__ = [
    "CompareConfig",
    "comparison_table",
    "json_line",
    "paired_table",
    "register",
    "win_rate_table",
]

NOT_FLAGS = ("agent.name", "output.run_id", "eval.judge")
"""Settings of the runs that ``compare`` sets itself: each agent's name is its run id; the
judge is the comparison's own (``--judge``, ``scoring.judge``)."""


class CompareConfig(RunConfig):
    """What ``compare`` does: the agents it runs (with ``RunConfig``'s settings) or the runs
    it compares, and how it scores them."""

    agents: Annotated[list[str], Flag(metavar="A,B,...")] = Field(
        default_factory=list,
        description="Agents to run on the same suite, tasks, seed, faults and model, "
        "comma-separated (e.g. react,dfsdt,react@4); NAME:KEY=VALUE gives one agent options of "
        'its own (e.g. "react,external:command=python my_agent.py").',
    )
    runs: Annotated[list[str], Flag(metavar="RUN", nargs="+")] = Field(
        default_factory=list,
        description="Existing run folders to compare instead (no new episode): the reference "
        "first, then the candidate(s).",
    )
    scoring: ScoringConfig = Field(default_factory=ScoringConfig)

    @model_validator(mode="after")
    def _agents_or_runs(self) -> CompareConfig:
        if bool(self.agents) == bool(self.runs):
            raise ValueError(
                "give --agents A,B,... (run and compare them) or --runs REF CAND... (compare "
                "existing runs), one of the two"
            )
        return self

    def agent_names(self) -> list[str]:
        """The agents, comma-separated (spaces also separate plain names, as in
        ``"react dfsdt"``); an agent with options of its own (``external:command=python
        my_agent.py``) is kept whole, spaces included."""
        out: list[str] = []
        for item in self.agents:
            for piece in item.split(","):
                if ":" in piece.partition("=")[0]:
                    out.append(piece.strip())
                else:
                    out.extend(piece.split())
        return [a for a in out if a]

    def run_config(self) -> RunConfig:
        """The settings of the runs a comparison of agents makes."""
        return RunConfig.model_validate(
            {name: getattr(self, name) for name in RunConfig.model_fields}
        )


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "compare",
        help=COMMANDS["compare"].help,
        description="--agents: run every agent on the same suite, tasks, seed, faults and "
        "model, into runs/compare-<id>/ (one run folder per agent) with comparison.json. "
        "--runs: compare existing run folders (the first is the reference), into "
        "runs/compare-runs-<hash>/. Every flag of `sandbox run` but --agent and --run-id.",
    )
    add_run_options(parser, exclude=NOT_FLAGS, model=CompareConfig)
    parser.add_argument(
        "--print-config",
        action="store_true",
        help="print the settings as YAML on stdout and exit without running",
    )
    parser.set_defaults(handler=handle)


def _compare(config: CompareConfig, runs: list[str], folder: Path) -> Comparison:
    """The comparison of ``runs`` under the protocol and judge of the settings; with existing
    runs, the suite and seed are the runs' own unless given."""
    scoring = config.scoring
    protocol = check_protocol(scoring)
    given = config.model_fields_set
    suite = suite_folder(config.suite) if not config.runs or "suite" in given else None
    seed = config.seed if not config.runs or "seed" in given else None

    async def go() -> Comparison:
        tasks = partial(judge_tasks, runs, str(suite) if suite else None)
        async with open_judge(scoring, protocol, folder / JUDGE_CACHE_FILE, tasks) as judge:
            return await compare_runs_async(
                runs,
                suite_path=suite,
                protocol=protocol,
                judge=judge,
                settings=judge_settings(scoring),
                seed=seed,
                steps=step_selection(scoring),
            )

    return asyncio.run(go())


def handle(args: argparse.Namespace) -> int:
    config = settings_from_args(args, CompareConfig)
    check_protocol(config.scoring)  # bad protocol and step settings fail before anything runs
    step_selection(config.scoring)
    if not config.runs:  # each agent and its options, as the runs will resolve them
        agent_configs(config.run_config(), config.agent_names())
    if args.print_config:  # only settings that run are printed
        print_config(config)
        return 0
    check_unredacted(config)
    if config.runs:
        comparison = _existing(config)
    else:
        load_run_suite(config.suite)  # the suite the runs will use, before the first episode
        agents = config.agent_names()
        first, _ = agent_spec(agents[0])
        run_config = config.run_config().with_values({"agent.name": first})
        comparison = run_comparison(
            run_config,
            agents,
            env=os.environ,
            compare=lambda runs: _compare(config, runs, Path(runs[0]).parent),
        )
    _show(comparison, config)
    labels = [lb for s in comparison.strategies for lb in s.labels]
    return judge_failure_exit(judge_errors(labels, comparison.outcomes))


def _show(comparison: Comparison, config: CompareConfig) -> None:
    """The tables (stdout, or stderr under --json), the report, and the JSON line."""
    as_json = config.output.json_line
    console = output_console(sys.stderr if as_json else sys.stdout)
    console.print(comparison_table(comparison))
    checks = state_checks_table(comparison)
    if checks is not None:
        console.print(checks)
    if comparison.win_rates:
        console.print(win_rate_table(comparison))
    if comparison.paired:
        console.print(paired_table(comparison))
    if comparison.shared_tasks is not None:
        console.print(f"the runs share {comparison.shared_tasks} task(s); episodes pair on them")
    for warning in comparison.warnings:
        console.print(f"warning: {warning}")
    if comparison.path:
        write_comparison_report(comparison, plots=config.eval.plots)
    console.print(f"comparison folder: {comparison.path}")
    if as_json:
        sys.stdout.write(json.dumps(json_line(comparison)) + "\n")


def _existing(config: CompareConfig) -> Comparison:
    runs = list(dict.fromkeys(config.runs))
    if len(runs) < 2:
        raise ConfigError("--runs needs at least two different run folders: REFERENCE CANDIDATE")
    for run in runs:
        if not (Path(run) / "manifest.json").is_file():
            raise RunError(f"no run folder at {run} (a folder holding manifest.json)")
    folder = runs_folder(runs, config.output.out)
    folder.mkdir(parents=True, exist_ok=True)
    comparison = _compare(config, runs, folder)
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
        "pass_rate": {
            s.name: None if s.pass_rate is None else round(s.pass_rate, 6)
            for s in comparison.strategies
        },
        "n": {s.name: s.summary.n for s in comparison.strategies},
        "shared_tasks": comparison.shared_tasks,
        "runs": {s.name: s.run for s in comparison.strategies},
        "win_rates": {
            row: {col: round(c.win_rate.value, 6) for col, c in cols.items()}
            for row, cols in comparison.win_rates.items()
        },
        "mcnemar_p": {f"{p.a} vs {p.b}": round(p.p_value, 6) for p in comparison.paired},
        "warnings": comparison.warnings,
    }
    names, rates = state_check_rates(comparison)
    if rates:
        line["state_checks"] = {
            name: {check: check_line(by[name]) for check, by in rates.items() if name in by}
            for name in names
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
        line["judge"] = comparison.judge.model
        line["judge_kind"] = comparison.judge.kind
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
    title += f" - protocol {comparison.protocol}"
    if comparison.judge is not None:
        title += f", judge {judge_text(comparison.judge)}"
    table = Table(title=title)
    table.add_column("agent")
    table.add_column("n", justify="right")
    table.add_column("pass rate", justify="right")
    for group in comparison.groups:
        table.add_column(group, justify="right")
    for col in ("model calls", "tool calls", "tokens", "steps", "infra errors", "user failures"):
        table.add_column(col, justify="right")
    for s in comparison.strategies:
        groups = [group_rate(s, g) for g in comparison.groups]
        u = s.usage
        table.add_row(
            s.name or s.agent,
            str(s.summary.n),
            headline(s.summary).text,
            *groups,
            f"{s.per_episode(u.model_calls):.1f}",
            f"{s.per_episode(u.tool_calls):.1f}",
            f"{s.per_episode(u.tokens):.0f}",
            f"{s.per_episode(u.steps):.1f}",
            str(s.summary.infra_errors),
            str(s.summary.user_failures),
        )
    table.caption = (
        "costs are means per episode; infrastructure errors and user failures (a "
        "conversation's user failed) are left out of the pass rate"
    )
    return table


def state_checks_table(comparison: Comparison) -> Table | None:
    """In a world: each state check (``all`` first), one column per run: its rate with the
    interval, the episodes passed and pass^k at the largest k (None outside a world)."""
    names, rates = state_check_rates(comparison)
    if not rates:
        return None
    table = Table(title="state checks (the world's final state and the calls carried out)")
    table.add_column("check")
    for name in names:
        table.add_column(name, justify="right")
    for check, by_name in rates.items():
        table.add_row(check, *(check_cell(by_name[n]) if n in by_name else "-" for n in names))
    table.caption = "rate [95% CI] (passed/episodes); pass^k at the largest k"
    return table


def group_rate(strategy: StrategyResult, group: str) -> str:
    """A group's pass rate in a table cell: ``-`` when the run has no such group, ``n/a`` when
    nothing in it counts."""
    summary = strategy.summary.groups.get(group)
    if summary is None:
        return "-"
    rate = headline(summary).pass_rate
    return "n/a" if rate is None else f"{rate:.1%}"


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
