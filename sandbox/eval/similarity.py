"""Similarity of argument values and argument objects (UltraTool's key-value measure).

Pure functions shared by the action matching, the plan score and the argument scores. Imports
``mock_tools.canonical`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from rapidfuzz.distance import Levenshtein

from mock_tools.canonical import dumps_canonical

__all__ = ["MISSING", "kv_similarity", "value_similarity"]

MISSING = object()
"""A value the prediction left out."""


def value_similarity(pred: Any, gold: Any) -> float:
    """Normalised Levenshtein similarity of two canonical values' JSON text (1.0 when equal)."""
    if pred is MISSING:
        return 0.0
    a, b = dumps_canonical(pred), dumps_canonical(gold)
    return 1.0 if a == b else float(Levenshtein.normalized_similarity(a, b))


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
