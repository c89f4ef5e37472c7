"""Comparing strategies under identical tool behaviour: runs side by side, win rates, paired
tests, and the comparison's report. Above ``run`` and ``eval``; below ``commands``."""

from sandbox.compare.comparison import (
    COMPARISON_FILE,
    Comparison,
    StrategyResult,
    compare_runs,
    run_comparison,
)
from sandbox.compare.report import render_comparison_markdown, write_comparison_report
from sandbox.compare.stats import PairedComparison, WinCell, paired_tests, win_cells

__all__ = [
    "COMPARISON_FILE",
    "Comparison",
    "PairedComparison",
    "StrategyResult",
    "WinCell",
    "compare_runs",
    "paired_tests",
    "render_comparison_markdown",
    "run_comparison",
    "win_cells",
    "write_comparison_report",
]
