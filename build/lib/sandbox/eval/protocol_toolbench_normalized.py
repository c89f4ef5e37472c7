"""The ``toolbench-normalized`` protocol: ToolEval's normalized evaluator for the win rate.

ToolBench's ``tooleval_gpt-3.5-turbo_normalized`` evaluator (``registered_cls/tooleval.py``,
``OpenAINormalizedEvaluator.normalized_openai_completions``) compares two answers from parsed
details instead of statuses: ``check_solve_query`` on each final answer, then fewer steps, or
``parse_answer_details`` and the score ``10 * successful tool calls + 5 * tool types
- 5 * ln(steps)`` (``tooleval_rules.normalized_round``). It is a preference evaluator only (it has
no ``check_is_solved``, which ToolEval's pass-rate script needs), so the pass rate here is the
``toolbench`` protocol's. Rounds, order and the missing-answer rules are ``toolbench``'s too.
May import ``eval`` modules only.
"""

from __future__ import annotations

from sandbox.eval.protocol import JudgeSettings
from sandbox.eval.protocol_toolbench import ToolbenchProtocol
from sandbox.eval.tooleval_preference import RoundRule
from sandbox.eval.tooleval_rules import normalized_round

__all__ = ["ToolbenchNormalizedProtocol"]


class ToolbenchNormalizedProtocol(ToolbenchProtocol):
    name = "toolbench-normalized"
    summary = "toolbench's pass rate; ToolEval's normalized preference (steps, parsed details)"
    defaults = JudgeSettings(samples=4, rounds=2, temperature=0.2)
    round_rule: RoundRule = staticmethod(normalized_round)
