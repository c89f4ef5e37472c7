"""Understand / arguments: UltraTool's key-value argument accuracy, per reference step.

UltraTool (Huang et al. 2024, the "tool usage" evaluation; ``evaluation/utils.py``,
``cal_param_res``),
over the reference steps of an episode (canonical arguments, schema defaults filled):

- a reference step with no executed call matched to it (``actions.match_actions``) scores 0;
- a matched step scores the mean over the reference's keys of the value score (a key the agent
  left out scores 0): ``understand_kv`` uses ``similarity.value_similarity`` (1 - normalised
  Levenshtein distance of the values' text; an empty reference value is 1 only for an empty
  prediction), ``understand_exact`` asks for the same JSON value;
- a reference step without arguments scores 1 when the matched call has none either, else 0
  (UltraTool's code gives such a step 0 whatever was predicted, which punishes a perfect call);
- the episode's value is the mean over its reference steps (a macro average per step, as the
  paper reports it), ``n`` the number of reference steps.

Keys the agent added that the reference does not have are not penalised here (they are a recall
metric, as UltraTool's); the plan score's argument similarity, over the union of keys, sees them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sandbox.eval.actions import Action
from sandbox.eval.measure import Measure, mean_measure
from sandbox.eval.similarity import MISSING, kv_similarity, same_value, value_similarity

__all__ = ["ArgumentScores", "kv_similarity", "score_arguments", "value_similarity"]


class ArgumentScores:
    """Per-step results of one episode (or probe): one exact and one similarity score per step."""

    def __init__(self) -> None:
        self.exact: list[float] = []
        self.similarity: list[float] = []

    def add(self, pred: Mapping[str, Any], gold: Mapping[str, Any]) -> None:
        """One reference step and the arguments of the call matched to it."""
        if not gold:
            score = 1.0 if not pred else 0.0
            self.exact.append(score)
            self.similarity.append(score)
            return
        keys = sorted(gold)
        values = [pred.get(k, MISSING) for k in keys]
        self.exact.append(
            sum(same_value(v, gold[k]) for v, k in zip(values, keys, strict=True)) / len(keys)
        )
        self.similarity.append(
            sum(value_similarity(v, gold[k]) for v, k in zip(values, keys, strict=True)) / len(keys)
        )

    def add_unmatched(self) -> None:
        """A reference step no call was matched to: 0 on both."""
        self.exact.append(0.0)
        self.similarity.append(0.0)

    def measures(self) -> tuple[Measure, Measure]:
        """``(exact, key-value similarity)``, means over steps; not applicable without steps."""
        return mean_measure(self.exact), mean_measure(self.similarity)


def score_arguments(
    pred: Sequence[Action], gold: Sequence[Action], pairs: Sequence[tuple[int, int]]
) -> tuple[Measure, Measure]:
    """``(exact, kv)`` per reference step of ``gold``, matched through ``(pred, gold)`` pairs."""
    matched = {j: i for i, j in pairs}
    scores = ArgumentScores()
    for j, step in enumerate(gold):
        if j in matched:
            scores.add(pred[matched[j]].args, step.args)
        else:
            scores.add_unmatched()
    return scores.measures()
