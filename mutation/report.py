"""The scores as a table (console and ``docs/testing.md``), and the survivors, module by module."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from importlib.metadata import version
from pathlib import Path
from typing import Any

from mutation.equivalents import EQUIVALENTS, Equivalent
from mutation.hand import HandResult
from mutation.modules import GROUPS
from mutation.results import GOAL, ModuleScore

__all__ = [
    "console_report",
    "equivalents_table",
    "markdown_row",
    "markdown_table",
    "stale_equivalents",
    "write_saved",
    "write_summary",
]

BEGIN = "<!-- mutation-scores: begin (written by `make mutate`) -->"
END = "<!-- mutation-scores: end -->"
EQ_BEGIN = (
    "<!-- equivalent-mutants: begin (written by `make mutate`, from mutation/equivalents.py) -->"
)
EQ_END = "<!-- equivalent-mutants: end -->"


def _score(m: ModuleScore) -> str:
    if m.score is None:
        return "n/a"
    return f"{100 * m.score:.1f}%"


def _verdict(m: ModuleScore) -> str:
    if m.not_checked:
        return "incomplete"
    return "ok" if m.meets_goal else "below goal"


HEAD = (
    "| module | mutants | killed by tests | caught by mypy | survived | equivalent | score "
    "| measured |"
)


def markdown_row(m: ModuleScore, measured: str) -> str:
    return _row(m.to_json(), measured)


def _row(m: dict[str, Any], measured: str) -> str:
    """A module's row from its scores as ``--json`` saves them."""
    score = "n/a" if m["score"] is None else f"{100 * m['score']:.1f}%"
    return (
        f"| `{m['module']}` | {m['mutants']} | {m['killed']} | {m['caught_by_mypy']} | "
        f"{m['survived']} | {m['equivalent']} | {score} | {measured} |"
    )


def markdown_table(rows: dict[str, str]) -> str:
    """The table of ``rows`` (module -> its row), in the order of ``mutation.modules``."""
    order = [m for g in GROUPS for m in g.modules]
    ranked = sorted(rows, key=lambda m: order.index(m) if m in order else len(order))
    lines = [HEAD, "|---|---:|---:|---:|---:|---:|---:|---|"]
    return "\n".join(lines + [rows[m] for m in ranked])


def console_report(
    scores: Sequence[ModuleScore], hand: Sequence[HandResult] = (), *, survivors: int = 20
) -> str:
    """The table, every module's survivors (at most ``survivors`` each), the hand mutants."""
    width = max([len(m.module) for m in scores] + [6])
    out = [f"{'module':<{width}}  mutants  killed  mypy  survived  equiv  score   verdict"]
    for m in scores:
        out.append(
            f"{m.module:<{width}}  {m.mutants:>7}  {m.killed:>6}  {m.caught_by_mypy:>4}  "
            f"{len(m.survivors):>8}  {len(m.equivalent):>5}  {_score(m):>6}  {_verdict(m)}"
        )
    for m in scores:
        if m.survivors:
            out.append(f"\n{m.module}: {len(m.survivors)} surviving mutants")
            out += [f"  {s.name}\n      {s.describe()}" for s in m.survivors[:survivors]]
            if len(m.survivors) > survivors:
                out.append(f"  ... and {len(m.survivors) - survivors} more (see --json)")
    if hand:
        out.append("\nhand-written mutants (issues 30 and 38):")
        out += [f"  {r.outcome:<8} {r.mutant.file}: {r.mutant.breaks}" for r in hand]
    out.append(f"\ngoal: {100 * GOAL:.0f}% of the mutants of every module killed")
    return "\n".join(out)


def stale_equivalents(scores: Sequence[ModuleScore]) -> list[Equivalent]:
    """Entries of complete modules that no survivor matched (the code changed, or a test now
    kills the mutant): they should be removed."""
    complete = {m.module for m in scores if not m.not_checked}
    matched = {e for m in scores for _, e in m.equivalent}
    return [e for e in EQUIVALENTS if e.module in complete and e not in matched]


def _replace(text: str, begin: str, end: str, body: str, path: Path) -> str:
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.DOTALL)
    if not pattern.search(text):
        raise ValueError(f"{path}: no '{begin}' ... '{end}' section to write into")
    return pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text)


def equivalents_table(equivalents: Sequence[Equivalent] = EQUIVALENTS) -> str:
    if not equivalents:
        return "None listed."
    lines = ["| module | function | change | why it changes nothing |", "|---|---|---|---|"]
    for e in equivalents:
        change = " / ".join(e.before) + " -> " + " / ".join(e.after)
        lines.append(f"| `{e.module}` | `{e.function}` | `{change}` | {e.why} |")
    return "\n".join(lines)


_ROW = re.compile(r"^\| `([\w.]+)` \|.*\|$", re.MULTILINE)


def _recorded_rows(text: str) -> dict[str, str]:
    start, end = text.find(BEGIN), text.find(END)
    section = text[start:end] if 0 <= start < end else ""
    return {m.group(1): m.group(0) for m in _ROW.finditer(section)}


def write_summary(path: Path, scores: Sequence[ModuleScore]) -> list[str]:
    """Replace the generated parts of ``path`` (between their markers): the rows of the modules
    measured in full now (the other rows stay, each with the date of its own run), and the list
    of equivalent mutants. Returns the modules whose row was written."""
    measured = _measured_now()
    rows = {m.module: markdown_row(m, measured) for m in scores if not m.not_checked}
    _write_rows(path, rows)
    return list(rows)


def write_saved(path: Path, saved: Sequence[dict[str, Any]]) -> list[str]:
    """``write_summary`` from the scores a run saved with ``--json`` (today's date, this
    mutmut's version): for runs made elsewhere (another checkout of the same code) whose rows
    are to be recorded here. Modules a saved run did not measure in full are left out."""
    measured = _measured_now()
    rows = {m["module"]: _row(m, measured) for m in saved if not m["not_checked"]}
    _write_rows(path, rows)
    return list(rows)


def _measured_now() -> str:
    return f"{date.today().isoformat()}, mutmut {version('mutmut')}"


def _write_rows(path: Path, new_rows: dict[str, str]) -> None:
    text = path.read_text(encoding="utf-8")
    rows = _recorded_rows(text)
    rows.update(new_rows)
    order = [m for g in GROUPS for m in g.modules]
    missing = [m for m in order if m not in rows]
    note = (
        "Each row is written by the `make mutate` run (full, or narrowed to some modules) dated "
        "in it; a run cut short writes no row."
    )
    if missing:
        note += " Not measured yet: " + ", ".join(f"`{m}`" for m in missing) + "."
    text = _replace(text, BEGIN, END, note + "\n\n" + markdown_table(rows), path)
    text = _replace(text, EQ_BEGIN, EQ_END, equivalents_table(), path)
    path.write_text(text, encoding="utf-8")
