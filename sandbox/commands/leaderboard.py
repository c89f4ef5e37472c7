"""``sandbox leaderboard``: one row per (suite, model, agent, protocol, judge) from existing runs.

sandbox leaderboard                                   # every scored run under runs/
sandbox leaderboard runs/a runs/b --reference runs/a  # + win and tie rate against runs/a
sandbox leaderboard --json                            # the rows as a JSON array
sandbox leaderboard --md                              # markdown tables, one per suite
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.table import Table

from sandbox.commands import COMMANDS
from sandbox.commands.console import output_console
from sandbox.errors import ConfigError, RunError
from sandbox.store import MANIFEST
from sandbox.store.defaults import DEFAULT_OUT

if TYPE_CHECKING:  # the view package loads only when the command runs (start-up)
    from sandbox.view import Leaderboard, LeaderboardRow

__all__ = ["leaderboard_markdown", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "leaderboard",
        help=COMMANDS["leaderboard"].help,
        description="Rank the scored runs given (or every run under --runs-dir): pass rate with "
        "its 95%% interval, pass@k and pass^k, win and tie rate against a reference run, "
        "mean cost, tokens, model and tool calls per episode, and step-level scores. Runs on "
        "different suites are ranked apart.",
    )
    parser.add_argument(
        "runs",
        nargs="*",
        metavar="RUN",
        help="run folders, or folders of runs (default: every run under --runs-dir)",
    )
    parser.add_argument(
        "--runs-dir",
        default=None,
        help=f"where to find runs when none is given (default {DEFAULT_OUT})",
    )
    parser.add_argument(
        "--reference", metavar="RUN", default=None, help="run folder to compute win rates against"
    )
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print the rows as a JSON array")
    fmt.add_argument("--md", action="store_true", help="print markdown tables")
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    from sandbox.view import Catalog, build_leaderboard, read_record

    records = []
    if args.runs and args.runs_dir is not None:
        raise ConfigError("give run folders or --runs-dir, not both")
    sources = [Path(p) for p in args.runs] or [Path(args.runs_dir or DEFAULT_OUT)]
    for src in sources:
        if not src.is_dir():
            raise ConfigError(f"no folder {src}")
        if (src / MANIFEST).is_file():
            records.append(read_record(src, str(src)))
        else:
            records.extend(Catalog(src).records())
    if not records:
        raise RunError(f"no runs under {', '.join(map(str, sources))}: make one with `sandbox run`")
    reference = None
    if args.reference is not None:
        ref = Path(args.reference)
        if not (ref / MANIFEST).is_file():
            raise ConfigError(f"--reference {ref}: not a run folder (no {MANIFEST})")
        reference = read_record(ref, str(ref))
    board = build_leaderboard(records, reference)
    for s in board.skipped:
        print(f"note: left out {s.run}: {s.reason}", file=sys.stderr)
    for warning in board.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if not board.rows:
        raise RunError("no scored run to rank (see the notes above)")
    if args.json:
        rows = [r.model_dump(mode="json") for r in board.rows]
        sys.stdout.write(json.dumps(rows, indent=2, ensure_ascii=False) + "\n")
    elif args.md:
        sys.stdout.write(leaderboard_markdown(board))
    else:
        console = output_console(sys.stdout)
        for table in _tables(board):
            if not console.is_terminal:  # a file or a pipe: as wide as the table, never squeezed
                console.width = 10_000  # a measure is capped at the console's width
                console.width = max(200, console.measure(table).maximum)
            console.print(table)
    return 0


def _suite_title(name: str, fingerprint: str) -> str:
    return f"suite {name} ({fingerprint.removeprefix('sha256:')[:12]})"


def _columns(rows: list[LeaderboardRow], order: list[str]) -> tuple[list[str], list[str], bool]:
    """pass@k columns, the step dimensions of ``order`` the rows have, and win-rate columns."""
    ks = sorted({k for r in rows for k in r.pass_at_k}, key=int)
    dims = [d for d in order if any(d in r.step_scores for r in rows)]
    wins = any(r.win_rate is not None or r.is_reference for r in rows)
    return ks, dims, wins


def _cells(
    row: LeaderboardRow, ks: list[str], dims: list[str], wins: bool, *, wide: bool = False
) -> list[str]:
    """A row's cells; ``wide`` (the markdown table) adds the episodes left out, by cause."""
    cells = [
        str(row.rank),
        row.model,
        row.agent,
        _scoring(row),
        _runs(row),
        str(row.n),
        row.headline.text if row.headline is not None else "n/a",
    ]
    for k in ks:
        at = row.pass_at_k.get(k)
        cells.append("-" if at is None else f"{at:.1%} / {row.pass_hat_k[k]:.1%}")
    if wins:
        if row.is_reference:
            cells += ["reference", "", ""]
        elif row.win_rate is None or row.win_rate_ci is None:
            cells += ["n/a" if row.wins is not None else "-", "-", "-"]
        else:
            cells += [
                _rate(row.win_rate, row.win_rate_ci),
                f"{row.tie_rate or 0.0:.1%}",
                f"{row.wins}/{row.losses}/{row.ties}",
            ]
    cells += [
        f"{row.cost_usd:.4f}",
        f"{row.tokens:.0f}",
        f"{row.model_calls:.2f}",
        f"{row.tool_calls:.2f}",
    ]
    if wide:
        cells += [str(row.infra_errors), str(row.user_failures)]
    cells += [f"{row.step_scores[d]:.1%}" if d in row.step_scores else "-" for d in dims]
    return cells


def _rate(value: float, ci: tuple[float, float]) -> str:
    return f"{100 * value:.1f}% [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _scoring(row: LeaderboardRow) -> str:
    """How the row's labels were made: the protocol, and the judge when there was one."""
    judge = row.judge or ""
    if judge and row.judge_kind == "rules":
        judge += " (not an LLM)"
    return row.protocol + (f" / {judge}" if judge else "")


def _runs(row: LeaderboardRow) -> str:
    """Runs pooled, and the distinct samples when repeats made fewer of them."""
    text = str(len(row.runs))
    if row.repeats:
        text += f" ({row.samples} sample{'s' if row.samples != 1 else ''})"
    return text


def _headers(ks: list[str], dims: list[str], wins: bool) -> list[str]:
    heads = ["#", "model", "agent", "scored by", "runs", "n", "pass rate [95% CI]"]
    heads += [f"pass@{k} / pass^{k}" for k in ks]
    if wins:
        heads += ["win rate [95% CI]", "ties", "W/L/T"]
    heads += ["cost/ep", "tokens/ep", "model calls/ep", "tool calls/ep"]
    heads += ["infra errors", "user failures", *dims]
    return heads


def _short_headers(ks: list[str], dims: list[str], wins: bool) -> list[str]:
    """Headers for the terminal: the same columns, narrower."""
    heads = ["#", "model", "agent", "scored by", "runs", "n", "pass rate"]
    heads += [f"@{k} / ^{k}" for k in ks]
    if wins:
        heads += ["win rate", "ties", "W/L/T"]
    heads += ["cost", "tokens", "calls", "tools", *(d.split("_")[0][:6] for d in dims)]
    return heads


def _left_out(row: LeaderboardRow) -> str:
    """The episodes a row leaves out, by cause: ``#2 infra 1 user 1``."""
    parts = [f"infra {row.infra_errors}"] if row.infra_errors else []
    parts += [f"user {row.user_failures}"] if row.user_failures else []
    return f"#{row.rank} " + " ".join(parts)


def _by_suite(board: Leaderboard) -> list[tuple[str, list[LeaderboardRow]]]:
    return [
        (
            _suite_title(name, fp),
            [r for r in board.rows if (r.suite, r.suite_fingerprint) == (name, fp)],
        )
        for name, fp in board.suites()
    ]


def _tables(board: Leaderboard) -> list[Table]:
    tables = []
    for title, rows in _by_suite(board):
        ks, dims, wins = _columns(rows, board.headline)
        table = Table(title=title)
        for i, head in enumerate(_short_headers(ks, dims, wins)):
            table.add_column(
                head,
                justify="left" if i in (1, 2, 3) else "right",
                no_wrap=i != 1,
                min_width=12 if i == 1 else None,  # the one column that wraps: never squeezed away
            )
        for r in rows:
            table.add_row(*_cells(r, ks, dims, wins))
        caption = "cost, tokens, calls (model) and tools (tool calls) are means per episode"
        caption += "; n: episodes the pass rate counts"
        left = [r for r in rows if r.infra_errors or r.user_failures]
        if left:
            caption += " (left out: " + ", ".join(_left_out(r) for r in left) + ")"
        if any(r.repeats for r in rows):
            caption += "; identical seeded repeats count once (samples)"
        if board.reference:
            caption += f"; win rate against {board.reference} (ToolEval's rules, ties half)"
        table.caption = caption + "; --md shows every step score"
        tables.append(table)
        checks = _state_checks(rows)
        if checks:
            tables.append(_checks_table(title, rows, checks))
    return tables


def _state_checks(rows: list[LeaderboardRow]) -> list[str]:
    """The state checks the rows have (a world suite), ``all`` first."""
    return list(dict.fromkeys(c.check for r in rows for c in r.state_checks))


def _check_cells(row: LeaderboardRow, checks: list[str]) -> list[str]:
    """The row's cell of each state check: its rate with the interval, (passed/episodes) and
    pass^k at the largest k (``-`` when the row has none)."""
    from sandbox.eval.state_checks import check_cell  # loaded when the command runs (start-up)

    by_check = {c.check: c for c in row.state_checks}
    return [check_cell(by_check[c]) if c in by_check else "-" for c in checks]


def _checks_table(title: str, rows: list[LeaderboardRow], checks: list[str]) -> Table:
    """A world suite's rows again, with their state checks."""
    table = Table(title=f"{title}: state checks")
    for i, head in enumerate(["#", "model", "agent", *checks]):
        table.add_column(head, justify="right" if i == 0 or i > 2 else "left")
    for r in rows:
        table.add_row(str(r.rank), r.model, r.agent, *_check_cells(r, checks))
    table.caption = (
        "the share of episodes that passed each check of the world's final state and calls "
        "(all: every one) [95% CI] (passed/episodes); pass^k at the largest k"
    )
    return table


def leaderboard_markdown(board: Leaderboard) -> str:
    """One markdown table per suite."""
    out: list[str] = ["# Leaderboard", ""]
    for title, rows in _by_suite(board):
        ks, dims, wins = _columns(rows, board.dimensions)
        heads = _headers(ks, dims, wins)
        out += [f"## {title}", "", "| " + " | ".join(heads) + " |", "|" + "---|" * len(heads)]
        out += ["| " + " | ".join(_cells(r, ks, dims, wins, wide=True)) + " |" for r in rows]
        out.append("")
        checks = _state_checks(rows)
        if checks:
            heads = ["#", "model", "agent", *(f"{c} [95% CI]" for c in checks)]
            out += [f"### State checks ({title})", "", "| " + " | ".join(heads) + " |"]
            out.append("|" + "---|" * len(heads))
            out += [
                "| " + " | ".join([str(r.rank), r.model, r.agent, *_check_cells(r, checks)]) + " |"
                for r in rows
            ]
            out += [
                "",
                "The share of episodes that passed each check of the world's final state and "
                "calls (all: every one), (passed/episodes), pass^k at the largest k.",
                "",
            ]
    if board.reference:
        out.append(f"Win rates against `{board.reference}` (ToolEval's rules, ties half).")
    out.append(
        "n: the episodes the pass rate counts (left out: infrastructure errors, failures of a "
        "conversation's user, judge errors)."
    )
    repeats = [run for r in board.rows for run in r.repeats]
    if repeats:
        out.append(
            "Identical seeded repeats (same seed and trial) count once: " + ", ".join(repeats) + "."
        )
    for warning in board.warnings:
        out.append(f"Warning: {warning}.")
    return "\n".join(out) + "\n"
