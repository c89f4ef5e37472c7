"""The benchmarks' own step-score arithmetic, on their own input shapes.

Each module computes what a benchmark's evaluator code computes, quirks included, on the inputs
that code reads (a T-Eval datum with its ``prediction`` and ``ground_truth``, an UltraTool
prediction list and reference, a ToolEyes conversation):

- ``teval_parse``, ``teval``, ``teval_plan``: T-Eval (open-compass/T-Eval, ``teval/evaluators/``);
- ``ultratool``, ``ultratool_parse``: UltraTool (``evaluation/utils.py``);
- ``tooleyes``: ToolEyes' rule-based scores (``Code/Evaluation/util/utils.py``);
- ``python_expr``: what their ``eval`` calls give, computed without running code;
- ``rounding``: numpy's ``round(x, 4)``, as their tables print;
- ``teval_files``, ``ultratool_files``, ``tooleyes_files``: reading each benchmark's own
  prediction files (``sandbox rescore --teval|--ultratool|--tooleyes``).

Where the reference code raises on an input (it then has no value), the functions raise
``NoReferenceValue`` or complete the rule as each module documents; docs/evaluation.md lists
every such case. How a trajectory or a probe answer becomes these inputs is the business of the
step metrics (``sandbox.eval.steps.teval_metrics`` ...) and of the probe. Pure but for the
``*_files`` modules, which read files (through ``sandbox.store.input_files``, the one bounded
reader of files from elsewhere) a record at a time within ``record_limits``; imports no other
project module (rapidfuzz for the edit distance, networkx for T-Eval's matching).
"""

from __future__ import annotations


class NoReferenceValue(ValueError):
    """The reference code raises on this input: it has no value to reproduce."""


__all__ = ["NoReferenceValue"]
