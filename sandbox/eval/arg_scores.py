"""Understand / arguments: UltraTool's key-value metric on calls matched to reference steps.

For every argument of a matched reference step (its canonical arguments, schema defaults filled):

- *exact*: the agent's canonical value for that key equals the reference value;
- *key-value similarity*: the normalised Levenshtein similarity
  (``rapidfuzz.distance.Levenshtein.normalized_similarity``) of the canonical JSON of the two
  values; a key the agent left out scores 0.

Both are averaged over all reference argument values of all matched pairs of the episode (a micro
average), so a step with five arguments weighs five times a step with one. Keys the agent added
that the reference does not have are not penalised here (they are a recall metric, as UltraTool's);
the plan score's argument similarity, which uses the union of keys, does see them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mock_tools.canonical import dumps_canonical
from sandbox.eval.actions import Action
from sandbox.eval.measure import Measure, mean_measure
from sandbox.eval.similarity import MISSING, kv_similarity, value_similarity

__all__ = ["ArgumentScores", "kv_similarity", "score_arguments", "value_similarity"]


class ArgumentScores:
    """Per-value results of one episode: exact matches and similarities, one entry per value."""

    def __init__(self) -> None:
        self.exact: list[float] = []
        self.similarity: list[float] = []

    def add(self, pred: Mapping[str, Any], gold: Mapping[str, Any]) -> None:
        for k in sorted(gold):
            value = pred.get(k, MISSING)
            self.exact.append(1.0 if value is not MISSING and _same(value, gold[k]) else 0.0)
            self.similarity.append(value_similarity(value, gold[k]))

    def measures(self) -> tuple[Measure, Measure]:
        """``(exact, key-value similarity)``; not applicable when no reference value was seen."""
        return mean_measure(self.exact), mean_measure(self.similarity)


def _same(a: Any, b: Any) -> bool:
    return dumps_canonical(a) == dumps_canonical(b)


def score_arguments(
    pred: Sequence[Action], gold: Sequence[Action], pairs: Sequence[tuple[int, int]]
) -> tuple[Measure, Measure]:
    """``(exact, kv)`` over the reference argument values of the matched ``(pred, gold)`` pairs."""
    scores = ArgumentScores()
    for i, j in pairs:
        scores.add(pred[i].args, gold[j].args)
    return scores.measures()
