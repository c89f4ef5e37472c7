"""The files a comparison leaves beside its run folders: report.md and PNG plots.

May import ``sandbox.compare`` and ``sandbox.eval`` only.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.compare.comparison import Comparison, StrategyResult
from sandbox.eval.judge import judge_text
from sandbox.eval.report import pct, rate_text, remove_plots, step_rows
from sandbox.eval.state_checks import CheckRate, check_cell
from sandbox.eval.stats import Interval

__all__ = [
    "differing_tasks_markdown",
    "render_comparison_markdown",
    "state_check_rates",
    "write_comparison_report",
]

COMPARISON_PLOTS = ("pass_rate.png", "cost_vs_pass.png")
"""The PNGs a comparison draws into its folder."""


def render_comparison_markdown(comparison: Comparison) -> str:
    """The comparison's report, one section after the other."""
    lines = _header(comparison)
    lines += _pass_rate_section(comparison)
    lines += _state_checks_section(comparison)
    lines += _win_rate_section(comparison)
    lines += _paired_section(comparison)
    lines += _step_scores_section(comparison)
    lines += differing_tasks_markdown(comparison)
    return "\n".join(lines) + "\n"


def _header(comparison: Comparison) -> list[str]:
    about = f"Suite `{comparison.suite}` (`{comparison.suite_fingerprint[:19]}`)"
    if comparison.model:
        about += f", model `{comparison.model}`"
    if comparison.seed is not None:
        about += f", seed {comparison.seed}"
    about += f", protocol `{comparison.protocol}`"
    if comparison.judge is not None:
        about += f", judge {judge_text(comparison.judge)}"
    lines = [f"# Comparison {comparison.id}", "", about + "."]
    if comparison.shared_tasks is not None:
        lines += ["", f"The runs share {comparison.shared_tasks} task(s); episodes pair on them."]
    for warning in comparison.warnings:
        lines += ["", f"**Warning:** {warning}"]
    if comparison.path:
        lines += [
            "",
            f"Browse the runs side by side: `sandbox view {comparison.path}`; rank them with "
            f"`sandbox leaderboard {comparison.path}`.",
        ]
    return lines


def _pass_rate_section(comparison: Comparison) -> list[str]:
    lines = ["", "## Pass rate and cost", ""]
    groups = comparison.groups
    header = ["agent", "n", "pass rate (95% CI)", *groups, "model calls/ep", "tool calls/ep"]
    header += ["infra errors", "user failures"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for s in comparison.strategies:
        per_group = [_group_rate(s, g) for g in groups]
        row = [
            s.name or s.agent,
            str(s.summary.n),
            rate_text(s.summary),
            *per_group,
            f"{s.per_episode(s.usage.model_calls):.2f}",
            f"{s.per_episode(s.usage.tool_calls):.2f}",
            str(s.summary.infra_errors),
            str(s.summary.user_failures),
        ]
        lines.append("| " + " | ".join(row) + " |")
    for s in comparison.strategies:
        for reason, episodes in s.summary.excluded.items():
            lines.append(
                f"\n{s.name or s.agent}: {len(episodes)} episode(s) left out of the pass rate "
                f"({reason}): {', '.join(episodes[:20])}"
            )
    return lines


def _group_rate(strategy: StrategyResult, group: str) -> str:
    summary = strategy.summary.groups.get(group)
    if summary is None:
        return "-"
    return "n/a" if summary.n == 0 else f"{summary.pass_rate.value:.1%}"


def _state_checks_section(comparison: Comparison) -> list[str]:
    """In a world: each state check, one column per run (its rate with the interval, the
    episodes passed, pass^k at the largest k), as each run's ``report.md`` gives it."""
    names, rates = state_check_rates(comparison)
    if not rates:
        return []
    lines = ["", "## State checks", "", "| check | " + " | ".join(names) + " |"]
    lines.append("|---|" + "---|" * len(names))
    for check, by_name in rates.items():
        cells = [check_cell(by_name[n]) if n in by_name else "-" for n in names]
        lines.append(f"| {check} | " + " | ".join(cells) + " |")
    return lines


def state_check_rates(comparison: Comparison) -> tuple[list[str], dict[str, dict[str, CheckRate]]]:
    """The runs' names and, per state check (``all`` first), each run's rate of it."""
    names = [s.name or s.agent for s in comparison.strategies]
    rates: dict[str, dict[str, CheckRate]] = {}
    for name, s in zip(names, comparison.strategies, strict=True):
        for r in s.state_checks.rates() if s.state_checks is not None else []:
            rates.setdefault(r.check, {})[name] = r
    return names, rates


def _win_rate_section(comparison: Comparison) -> list[str]:
    if not comparison.win_rates:
        return []
    names = comparison.names
    tie_values = {c.tie_value for row in comparison.win_rates.values() for c in row.values()}
    ties = "ties as half" if tie_values == {0.5} else "ties as 0"
    lines = ["", f"## Win rate (row against column, {ties}; W/L/T)", ""]
    lines.append("| | " + " | ".join(names) + " |")
    lines.append("|" + "---|" * (len(names) + 1))
    for row_name in names:
        cells = []
        for col in names:
            c = comparison.win_rates.get(row_name, {}).get(col)
            cells.append(
                "-"
                if c is None
                else f"{c.win_rate.value:.1%} ({c.wins}/{c.losses}/{c.ties}); "
                f"ToolEval {c.tooleval_win_rate:.1%}, ties {c.tie_rate:.1%}"
            )
        lines.append(f"| {row_name} | " + " | ".join(cells) + " |")
    return lines


def _paired_section(comparison: Comparison) -> list[str]:
    if not comparison.paired:
        return []
    lines = ["", "## Paired test (exact McNemar)", ""]
    lines.append("| A | B | n | only A | only B | p |")
    lines.append("|---|---|---|---|---|---|")
    for p in comparison.paired:
        lines.append(f"| {p.a} | {p.b} | {p.n} | {p.only_a} | {p.only_b} | {p.p_value:.3g} |")
    return lines


def _step_scores_section(comparison: Comparison) -> list[str]:
    """Per step protocol asked for (``--step-protocol``/``--step-metric``): every measure, one
    column per run (mean and the episodes it applies to)."""
    protocols = list(dict.fromkeys(p for s in comparison.strategies for p in s.step_scores))
    lines: list[str] = []
    names = [s.name or s.agent for s in comparison.strategies]
    for protocol in protocols:
        rows = {
            s.name or s.agent: {d: iv for d, iv, _ in step_rows(s.step_scores[protocol])}
            for s in comparison.strategies
            if protocol in s.step_scores
        }
        measures = list(dict.fromkeys(d for by_name in rows.values() for d in by_name))
        lines += ["", f"## Step-level scores (step protocol {protocol})", ""]
        lines.append("| dimension | " + " | ".join(names) + " |")
        lines.append("|---|" + "---|" * len(names))
        for d in measures:
            cells = [_step_cell(rows.get(n, {}).get(d)) for n in names]
            lines.append(f"| {d} | " + " | ".join(cells) + " |")
    return lines


def _step_cell(iv: Interval | None) -> str:
    return "-" if iv is None or iv.n == 0 else f"{pct(iv)} (n {iv.n})"


def differing_tasks_markdown(comparison: Comparison) -> list[str]:
    """The episodes whose label is not the same for every strategy, one row each."""
    names = [s.agent for s in comparison.strategies]
    by_agent = {
        s.agent: {(lb.task_id, lb.trial): lb.label for lb in s.labels}
        for s in comparison.strategies
    }
    keys = list(dict.fromkeys(k for s in comparison.strategies for k in by_agent[s.agent]))
    rows = []
    for key in keys:
        labels = [by_agent[n].get(key, "missing") for n in names]
        if len(set(labels)) > 1:
            rows.append(f"| {key[0]} | {key[1]} | " + " | ".join(labels) + " |")
    if not keys:
        return []
    lines = ["", "## Tasks where the strategies differ", ""]
    if not rows:
        return [*lines, f"None: every strategy got the same label on all {len(keys)} episodes."]
    lines.append("| task | trial | " + " | ".join(names) + " |")
    lines.append("|---|---:|" + "---|" * len(names))
    return [*lines, *rows, "", f"{len(rows)} of {len(keys)} episodes differ."]


def write_comparison_report(comparison: Comparison, *, plots: bool = True) -> list[Path]:
    """Write report.md (and pass-rate / cost plots) into the comparison folder."""
    if comparison.path is None:
        raise ValueError("the comparison has no folder")
    folder = Path(comparison.path)
    report = folder / "report.md"
    report.write_text(render_comparison_markdown(comparison), encoding="utf-8")
    written = [report]
    remove_plots(folder, COMPARISON_PLOTS)  # no plot outlives the figures it showed
    if plots:
        from sandbox.eval.plots import plot_cost_vs_pass, plot_rates  # matplotlib only here

        rates = [(s.name or s.agent, s.summary.pass_rate) for s in comparison.strategies]
        written.append(
            plot_rates(rates, folder / COMPARISON_PLOTS[0], title="pass rate per strategy (95% CI)")
        )
        points = [
            (s.name or s.agent, s.per_episode(s.usage.model_calls), s.summary.pass_rate)
            for s in comparison.strategies
        ]
        written.append(
            plot_cost_vs_pass(
                points,
                folder / COMPARISON_PLOTS[1],
                xlabel="model calls per episode",
                title="cost against pass rate",
            )
        )
    return written
