"""Similarity of argument values and argument objects (UltraTool's key-value measure).

UltraTool (Huang et al. 2024, "Planning, Creation, Usage: Benchmarking LLMs for Comprehensive
Tool Utilization in Real-World Complex Scenarios", the tool-usage evaluation;
``evaluation/utils.py``, ``cal_param_res``) scores one argument as 1 - the normalised Levenshtein
distance of the two values' text, and an empty reference value as 1 for an empty prediction and
0 otherwise.

Values are compared as JSON values, not as their quoted JSON text:

- equal JSON values (canonical JSON: key order and spacing do not matter) score 1;
- a string is compared by its content (``"Paris"`` vs ``"Pari"``: 1 - 1/5), never with its
  quotes, which would make any two short strings look alike;
- any other value (number, boolean, list, object) by its canonical JSON text, as UltraTool
  compares ``str()`` of non-string values;
- an empty reference value (``""``, ``[]``, ``{}``, ``null``) scores 1 for an empty prediction and
  0 otherwise (the Levenshtein similarity of ``""`` to anything short would be generous).

Pure functions shared by the action matching, the plan score and the argument scores. Imports
``mock_tools.canonical`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from rapidfuzz.distance import Levenshtein

from mock_tools.canonical import dumps_canonical

__all__ = ["MISSING", "is_empty", "kv_similarity", "same_value", "value_similarity", "value_text"]

MISSING = object()
"""A value the prediction left out."""


def is_empty(value: Any) -> bool:
    """UltraTool's ``len(value) == 0`` for strings and containers; ``null`` is empty too."""
    return value is None or (isinstance(value, (str, list, dict)) and len(value) == 0)


def value_text(value: Any) -> str:
    """What the edit distance reads: a string's content, any other value's canonical JSON."""
    return value if isinstance(value, str) else dumps_canonical(value)


def same_value(pred: Any, gold: Any) -> bool:
    """Equal as JSON values (canonical form), not as text."""
    kind = type(pred)
    if kind is type(gold) and kind in (str, int):  # their JSON text is one-to-one: compare directly
        return bool(pred == gold)
    return pred is not MISSING and dumps_canonical(pred) == dumps_canonical(gold)


def value_similarity(pred: Any, gold: Any) -> float:
    """1 for equal values; else normalised Levenshtein similarity of their text (see module doc).

    A value the prediction left out (``MISSING``) scores 0; an empty reference value scores 1
    only against an empty prediction.
    """
    if pred is MISSING:
        return 0.0
    if same_value(pred, gold):
        return 1.0
    if is_empty(gold) or is_empty(pred):
        return 1.0 if is_empty(gold) and is_empty(pred) else 0.0
    return float(Levenshtein.normalized_similarity(value_text(pred), value_text(gold)))


def kv_similarity(
    pred: Mapping[str, Any],
    gold: Mapping[str, Any],
    *,
    keys: Literal["gold", "union"] = "gold",
) -> float:
    """Mean per-key value similarity over the reference keys (or the union of both key sets).

    A key missing on either side scores 0. With no keys at all the two argument objects are equal
    and the similarity is 1.0.
    """
    names = sorted(set(gold) | set(pred)) if keys == "union" else sorted(gold)
    if not names:
        return 1.0
    total = 0.0
    for k in names:
        if k in pred and k in gold:
            total += value_similarity(pred[k], gold[k])
    return total / len(names)
