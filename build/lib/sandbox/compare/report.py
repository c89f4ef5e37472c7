"""The files a comparison leaves beside its run folders: report.md and PNG plots.

May import ``sandbox.compare`` and ``sandbox.eval`` only.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.compare.comparison import Comparison
from sandbox.eval.report import rate_text

__all__ = ["differing_tasks_markdown", "render_comparison_markdown", "write_comparison_report"]


def render_comparison_markdown(comparison: Comparison) -> str:
    about = f"Suite `{comparison.suite}` (`{comparison.suite_fingerprint[:19]}`)"
    if comparison.model:
        about += f", model `{comparison.model}`"
    if comparison.seed is not None:
        about += f", seed {comparison.seed}"
    about += f", protocol `{comparison.protocol}`"
    lines = [f"# Comparison {comparison.id}", "", about + "."]
    for warning in comparison.warnings:
        lines += ["", f"**Warning:** {warning}"]
    if comparison.path:
        lines += [
            "",
            f"Browse the runs side by side: `sandbox view {comparison.path}`; rank them with "
            f"`sandbox leaderboard {comparison.path}`.",
        ]
    lines += ["", "## Pass rate and cost", ""]
    groups = comparison.groups
    header = ["agent", "n", "pass rate (95% CI)", *groups, "model calls/ep", "tool calls/ep"]
    lines.append("| " + " | ".join(header) + " |")
    lines.append("|" + "---|" * len(header))
    for s in comparison.strategies:
        per_group = [
            f"{s.summary.groups[g].pass_rate.value:.1%}" if g in s.summary.groups else "-"
            for g in groups
        ]
        row = [
            s.name or s.agent,
            str(s.summary.n),
            rate_text(s.summary),
            *per_group,
            f"{s.per_episode(s.usage.model_calls):.2f}",
            f"{s.per_episode(s.usage.tool_calls):.2f}",
        ]
        lines.append("| " + " | ".join(row) + " |")
    for s in comparison.strategies:
        for reason, episodes in s.summary.excluded.items():
            lines.append(
                f"\n{s.name or s.agent}: {len(episodes)} episode(s) left out of the pass rate "
                f"({reason}): {', '.join(episodes[:20])}"
            )
    if comparison.win_rates:
        names = comparison.names
        tie_values = {c.tie_value for row in comparison.win_rates.values() for c in row.values()}
        ties = "ties as half" if tie_values == {0.5} else "ties as 0"
        lines += ["", f"## Win rate (row against column, {ties}; W/L/T)", ""]
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
    if comparison.paired:
        lines += ["", "## Paired test (exact McNemar)", ""]
        lines.append("| A | B | n | only A | only B | p |")
        lines.append("|---|---|---|---|---|---|")
        for p in comparison.paired:
            lines.append(f"| {p.a} | {p.b} | {p.n} | {p.only_a} | {p.only_b} | {p.p_value:.3g} |")
    lines += differing_tasks_markdown(comparison)
    return "\n".join(lines) + "\n"


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
    if plots:
        from sandbox.eval.plots import plot_cost_vs_pass, plot_rates  # matplotlib only here

        rates = [(s.name or s.agent, s.summary.pass_rate) for s in comparison.strategies]
        written.append(
            plot_rates(rates, folder / "pass_rate.png", title="pass rate per strategy (95% CI)")
        )
        points = [
            (s.name or s.agent, s.per_episode(s.usage.model_calls), s.summary.pass_rate)
            for s in comparison.strategies
        ]
        written.append(
            plot_cost_vs_pass(
                points,
                folder / "cost_vs_pass.png",
                xlabel="model calls per episode",
                title="cost against pass rate",
            )
        )
    return written
