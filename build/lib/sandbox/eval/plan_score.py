"""Plan: T-Eval's plan score of an executed (or proposed) action sequence against the reference.

T-Eval (Chen et al. 2024, "T-Eval: Evaluating the Tool Utilization Capability of Large Language
Models Step by Step", the plan dimension; ``teval/evaluators/planning_evaluator.py``,
``bertscore_match``), with its one defect removed:

1. similarity of every predicted action ``i`` to every reference step ``j``:
   ``NAME_WEIGHT * name(i, j) + ARGS_WEIGHT * args(i, j)``, where ``name`` is 1 when both resolve
   to the same ``(tool, api)`` and 0 otherwise (names are identifiers here, not prose, so equality
   replaces T-Eval's embedding cosine of the two names), and ``args`` is the key-value similarity
   over the union of both key sets (``similarity.kv_similarity``; T-Eval embeds ``str(args)``);
2. keep the edges whose similarity is above ``threshold`` (default 0.8, T-Eval's);
3. maximum-weight bipartite matching of the kept edges (``networkx.max_weight_matching``); among
   matchings of equal weight (a step the reference repeats, e.g. a retry) the one that keeps the
   order wins, through a vanishing penalty on ``(i - j)^2`` (T-Eval leaves this tie to chance);
4. the longest increasing subsequence of the matched pairs taken in predicted order, over their
   reference positions: the steps that were matched *and* in the right order;
5. ``precision = LIS / len(pred)``, ``recall = LIS / len(gold)``, F1.

T-Eval's defect: its LIS table starts every predicted step at length 1, matched or not, so any
non-empty plan gets at least one "match" and a wholly wrong plan scores above 0. Here unmatched
steps take no part in the LIS; a plan with no edge above the threshold scores 0.

With the default weights and threshold, a step needs the right API *and* an argument similarity
above 0.2 to match: the right API called without any of the reference's argument keys is not
the planned step; the argument values themselves are scored by ``understand``.

Edge cases: an empty plan against a non-empty reference scores 0; a non-empty plan against an
empty reference scores 0; both empty score 1 (nothing was needed and nothing was done; T-Eval
scores 0 whenever either side is empty, which it only meets on unparseable plans).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from pydantic import BaseModel

from sandbox.eval.actions import Action
from sandbox.eval.matching import Edge, MatchMemo, max_weight_pairs
from sandbox.eval.measure import f1
from sandbox.eval.similarity import kv_similarity

__all__ = [
    "ARGS_WEIGHT",
    "MATCH_THRESHOLD",
    "NAME_WEIGHT",
    "PlanScore",
    "longest_increasing",
    "plan_score",
    "similarity",
]

NAME_WEIGHT = 0.75
ARGS_WEIGHT = 0.25
MATCH_THRESHOLD = 0.8
TIE_BREAK = 1e-6


class PlanScore(BaseModel):
    precision: float
    recall: float
    f1: float
    n_pred: int
    n_gold: int
    matched: int
    """Pairs in the bipartite matching (above the threshold)."""
    in_order: int
    """Length of the longest increasing subsequence of the matched pairs."""


def similarity(pred: Action, gold: Action) -> float:
    name = 1.0 if pred.key is not None and pred.key == gold.key else 0.0
    return NAME_WEIGHT * name + ARGS_WEIGHT * kv_similarity(pred.args, gold.args, keys="union")


def longest_increasing(values: Sequence[int]) -> int:
    """Length of the longest strictly increasing subsequence (patience sorting, O(n log n))."""
    tails: list[int] = []
    for v in values:
        k = bisect_left(tails, v)
        if k == len(tails):
            tails.append(v)
        else:
            tails[k] = v
    return len(tails)


def plan_score(
    pred: Sequence[Action],
    gold: Sequence[Action],
    *,
    threshold: float = MATCH_THRESHOLD,
    memo: MatchMemo | None = None,
) -> PlanScore:
    """T-Eval's plan precision / recall / F1 without the free first match (see module doc);
    ``memo`` keeps searched matchings for the next episodes (``matching.MatchMemo``)."""
    n_pred, n_gold = len(pred), len(gold)
    if n_pred == 0 and n_gold == 0:
        return PlanScore(
            precision=1.0, recall=1.0, f1=1.0, n_pred=0, n_gold=0, matched=0, in_order=0
        )
    edges: list[Edge] = []
    scale = float(max(n_pred, n_gold)) ** 2
    for i, p in enumerate(pred):
        for j, g in enumerate(gold):
            sim = similarity(p, g)
            if sim > threshold:
                # a vanishing penalty on (i - j)^2 breaks ties between equal-weight matchings
                # (a repeated step) towards the non-crossing one, so the LIS does not lose them
                edges.append((i, j, sim - TIE_BREAK * (i - j) ** 2 / scale))
    pairs = max_weight_pairs(edges, memo=memo)  # (pred index, gold index), in predicted order
    lis = longest_increasing([j for _, j in pairs])
    precision = lis / n_pred if n_pred else 0.0
    recall = lis / n_gold if n_gold else 0.0
    return PlanScore(
        precision=precision,
        recall=recall,
        f1=f1(precision, recall),
        n_pred=n_pred,
        n_gold=n_gold,
        matched=len(pairs),
        in_order=lis,
    )
