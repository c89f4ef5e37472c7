"""The files a comparison leaves beside its run folders: report.md and PNG plots.

May import ``sandbox.compare`` and ``sandbox.eval`` only.
"""

from __future__ import annotations

from pathlib import Path

from sandbox.compare.comparison import Comparison
from sandbox.eval.plots import plot_cost_vs_pass, plot_rates
from sandbox.eval.report import rate_text

__all__ = ["render_comparison_markdown", "write_comparison_report"]


def render_comparison_markdown(comparison: Comparison) -> str:
    lines = [f"# Comparison {comparison.id}", ""]
    lines.append(f"Suite `{comparison.suite}` ({comparison.suite_fingerprint[:19]})")
    if comparison.model:
        lines.append(f", model `{comparison.model}`")
    if comparison.seed is not None:
        lines.append(f", seed {comparison.seed}")
    lines.append(f", protocol `{comparison.protocol}`")
    for warning in comparison.warnings:
        lines += ["", f"**Warning:** {warning}"]
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
    return "\n".join(lines) + "\n"


def write_comparison_report(comparison: Comparison, *, plots: bool = True) -> list[Path]:
    """Write report.md (and pass-rate / cost plots) into the comparison folder."""
    if comparison.path is None:
        raise ValueError("the comparison has no folder")
    folder = Path(comparison.path)
    report = folder / "report.md"
    report.write_text(render_comparison_markdown(comparison), encoding="utf-8")
    written = [report]
    if plots:
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
