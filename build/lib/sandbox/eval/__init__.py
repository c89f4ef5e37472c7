"""The evaluator: every score is computed from trajectories, so any old run can be re-scored.

Outcome half (pure functions unless noted):

- ``checks``: the task's deterministic answer checks (``run_checks``, ``all_pass``);
- ``pass_rate``: episode labels solved / unsolved / unsure with the deciding method
  (``label_episode``, ``label_run``, ``summarise``);
- ``win_rate``: outcomes and their summary (``summarise_wins``, ``mirror``), and ToolEval's rules
  as the default protocol's deterministic judge (``compare_runs``);
- ``stats``: seeded bootstrap intervals, exact McNemar, pass@k and pass^k;
- ``judge`` (async, I/O): the LLM judge, ToolEval's functions with a forced ``tool_choice``
  (``tooleval_functions``), behind a SQLite request cache (``sandbox.models.cache``);
- ``protocol`` / ``protocols``: the evaluation protocols by name (``default``, ``toolbench``,
  ``toolbench-normalized``: ``protocol_*`` modules, with ToolEval's rules in ``tooleval_*``);
- ``evaluate`` (I/O): ``evaluate_run(run_dir, suite, protocol=, judge=, reference_run=)``;
- ``report`` / ``plots`` (I/O): ``scores.json``, ``report.md``, PNGs, the terminal table.

Step-level half: ``step_scores`` and the modules it composes. The I/O modules are not imported
here, so importing a metric stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agents.lazy import lazy_package

if TYPE_CHECKING:
    from sandbox.eval.checks import CheckResult, all_pass, run_checks
    from sandbox.eval.pass_rate import (
        EpisodeLabel,
        PassSummary,
        label_episode,
        label_run,
        summarise,
    )
    from sandbox.eval.stats import Interval, bootstrap_ci, mcnemar_exact, pass_at_k, pass_hat_k
    from sandbox.eval.win_rate import PairOutcome, WinSummary, compare_runs, summarise_wins

_EXPORTS: dict[str, str] = {
    "CheckResult": "sandbox.eval.checks",
    "EpisodeLabel": "sandbox.eval.pass_rate",
    "Interval": "sandbox.eval.stats",
    "PairOutcome": "sandbox.eval.win_rate",
    "PassSummary": "sandbox.eval.pass_rate",
    "WinSummary": "sandbox.eval.win_rate",
    "all_pass": "sandbox.eval.checks",
    "bootstrap_ci": "sandbox.eval.stats",
    "compare_runs": "sandbox.eval.win_rate",
    "label_episode": "sandbox.eval.pass_rate",
    "label_run": "sandbox.eval.pass_rate",
    "mcnemar_exact": "sandbox.eval.stats",
    "pass_at_k": "sandbox.eval.stats",
    "pass_hat_k": "sandbox.eval.stats",
    "run_checks": "sandbox.eval.checks",
    "summarise": "sandbox.eval.pass_rate",
    "summarise_wins": "sandbox.eval.win_rate",
}

__all__ = [
    "CheckResult",
    "EpisodeLabel",
    "Interval",
    "PairOutcome",
    "PassSummary",
    "WinSummary",
    "all_pass",
    "bootstrap_ci",
    "compare_runs",
    "label_episode",
    "label_run",
    "mcnemar_exact",
    "pass_at_k",
    "pass_hat_k",
    "run_checks",
    "summarise",
    "summarise_wins",
]

lazy_package(__name__, _EXPORTS)
