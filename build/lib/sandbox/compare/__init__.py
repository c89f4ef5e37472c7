"""Comparing strategies under identical tool behaviour: runs side by side, win rates, paired
tests, and the comparison's report. Above ``run`` and ``eval``; below ``commands``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.compare.comparison import (
        COMPARISON_FILE,
        Comparison,
        StrategyResult,
        compare_runs,
        run_comparison,
    )
    from sandbox.compare.report import render_comparison_markdown, write_comparison_report
    from sandbox.compare.stats import PairedComparison, WinCell, paired_tests, win_cells

_EXPORTS: dict[str, str] = {
    "COMPARISON_FILE": "sandbox.compare.comparison",
    "Comparison": "sandbox.compare.comparison",
    "PairedComparison": "sandbox.compare.stats",
    "StrategyResult": "sandbox.compare.comparison",
    "WinCell": "sandbox.compare.stats",
    "compare_runs": "sandbox.compare.comparison",
    "paired_tests": "sandbox.compare.stats",
    "render_comparison_markdown": "sandbox.compare.report",
    "run_comparison": "sandbox.compare.comparison",
    "win_cells": "sandbox.compare.stats",
    "write_comparison_report": "sandbox.compare.report",
}

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

lazy_package(__name__, _EXPORTS)
