"""T-Eval's plan score: its two matching strategies, on its own plan records.

T-Eval, ``teval/evaluators/planning_evaluator.py`` (``PlanningEvaluator``, current defaults:
name weight 0.75, args weight 0.25, threshold 0.8). A plan is a list of ``{"id", "name",
"args"}`` records, as ``PlanningEvaluator.format_load`` makes them from a reply (``format_load``
between the first ``[`` and the last ``]``; each item's ``name`` and ``args`` through ``str()``,
``id`` through ``int()``; any failure makes the whole plan ``[]``); ``str`` replies are read line
by line, each line naming the first API of the sample's ``API_list`` it contains.

**bertscore** (``bertscore_match``, the default): either plan empty → 0; both sorted by id, a last
``FinishAction`` dropped; similarity = ``0.75 × cos(names) + 0.25 × cos(str(args))`` (embedding
cosines, each at least 0), as T-Eval computes it: the predicted names, the gold names, the
predicted and the gold arguments each encoded as one batch, each pair of lists made one cosine
matrix (``cosine_matrix``: the encoder's own ``util.cos_sim``), and the weights combined entry by
entry with numpy's float32 arithmetic, so that steps tied in exact arithmetic are tied, or not,
in their last bit as they are in T-Eval's matrix (which networkx's matching then follows);
edges strictly above the threshold; ``networkx.max_weight_matching``
on the graph built as T-Eval builds it (predicted nodes ``i``, gold nodes ``str(j)``, edges in
``i``-then-``j`` order, so ties fall as they fall there); then a longest increasing run of the
matched gold positions in predicted order. Kept quirk (**the free first match**): T-Eval's LIS
table starts every predicted step at 1, matched or not, so any non-empty plan counts one correct
step. precision = correct / predicted, recall = correct / gold, F1.

**permutation** (``permutation_match``): both plans get a ``FinishAction`` appended unless they
end with one, are cut to 9 steps and sorted by id; each step's ``prev`` (its dependencies) gains
its own index; every injective map of predicted to gold positions is tried and the best F1 of
(dependencies preserved / gold dependencies, / predicted dependencies) kept. Kept quirks: a gold
plan longer than 9 is replaced by the *predicted* plan's first 9 steps (T-Eval's
``gt_plan = pred_plan[:9]``), whose records are then shared by both sides; the first of equal
F1s wins. T-Eval's own loader drops ``prev``, so its permutation strategy raises on every plan it
loads; here a plan without ``prev`` has no dependencies (``[]``), which is what this strategy's
arithmetic then gives.

Where T-Eval raises (a plan that is only ``FinishAction``, so nothing is left to match) there is
no reference value: ``NoReferenceValue``; a reply over ``record_limits.MAX_REPLY_CHARS`` or a plan
over ``MAX_PLAN_STEPS`` steps is not scored either (``TooLarge``). Pure; networkx is imported
when a plan needs a search.
"""

from __future__ import annotations

import copy
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.record_limits import MAX_PLAN_STEPS, TooLarge, too_large
from sandbox.eval.benchmarks.teval import Cosine, cosine_matrix
from sandbox.eval.benchmarks.teval_parse import format_load

__all__ = [
    "FINISH_ACTION",
    "PlanOptions",
    "PlanScore",
    "bertscore_match",
    "load_plan",
    "permutation_match",
    "plan_sample",
    "str_plan",
]

FINISH_ACTION = "FinishAction"
MAX_PERMUTED = 9
Strategy = Literal["bertscore", "permutation"]


@dataclass(frozen=True)
class PlanOptions:
    name_weight: float = 0.75
    args_weight: float = 0.25
    threshold: float = 0.8
    strategy: Strategy = "bertscore"


@dataclass(frozen=True)
class PlanScore:
    precision: float
    recall: float
    f1: float
    parse_rate: float


def load_plan(data: Any) -> list[dict[str, Any]]:
    """``PlanningEvaluator.format_load``: ``[]`` when the reply is no readable plan."""
    try:
        loaded = format_load(data, start="[", end="]")
    except Exception:  # noqa: BLE001 - T-Eval: unreadable is an empty plan
        return []
    if not isinstance(loaded, list):
        return []
    plan = []
    for item in loaded:
        try:
            plan.append(
                {"name": str(item["name"]), "id": int(item["id"]), "args": str(item["args"])}
            )
        except Exception:  # noqa: BLE001 - one bad item voids the plan
            return []
    return plan


def str_plan(text: str, api_list: Sequence[str]) -> list[dict[str, Any]]:
    """A ``str`` reply read as T-Eval reads it: per line (``. `` also ends a line), the API of
    ``api_list`` found earliest in it (the first listed among equals), the line as its args."""
    plan: list[dict[str, Any]] = []
    for line in text.replace(". ", "\n").split("\n"):
        first, found = 1e9, ""
        for api in api_list:
            at = line.find(api)
            if at != -1 and at < first:
                first, found = at, api
        if found != "":
            plan.append({"id": len(plan), "name": found, "args": line})
    return plan


def plan_sample(
    datum: Mapping[str, Any], cosine: Cosine, options: PlanOptions, default_format: str = "json"
) -> PlanScore:
    """One datum of ``PlanningEvaluator`` (``prediction``, ``ground_truth``, ``meta``)."""
    meta = datum.get("meta")
    fmt = meta.get("prompt_type", default_format) if meta is not None else default_format
    too_large(datum["prediction"], "a reply")
    too_large(datum["ground_truth"], "a gold plan")
    gold = load_plan(datum["ground_truth"])
    if fmt == "json":
        pred = load_plan(datum["prediction"])
    elif fmt == "str":
        if meta is None or "API_list" not in meta:
            raise NoReferenceValue("T-Eval's str plans need the sample's meta.API_list")
        pred = str_plan(datum["prediction"], meta["API_list"])
    else:
        raise NoReferenceValue(f"plan prompt type {fmt!r} is not reproduced (json and str are)")
    for plan, whose in ((pred, "predicted"), (gold, "gold")):
        if len(plan) > MAX_PLAN_STEPS:
            raise TooLarge(
                f"a {whose} plan of {len(plan)} steps, over the {MAX_PLAN_STEPS} a plan may take"
            )
    if options.strategy == "permutation":
        p, r, f = permutation_match(pred, gold)
    else:
        p, r, f = bertscore_match(pred, gold, cosine, options)
    return PlanScore(p, r, f, parse_rate=0.0 if not pred or not gold else 1.0)


def bertscore_match(
    pred: Sequence[Mapping[str, Any]],
    gold: Sequence[Mapping[str, Any]],
    cosine: Cosine,
    options: PlanOptions = PlanOptions(),
) -> tuple[float, float, float]:
    """``(precision, recall, f1)`` by T-Eval's ``bertscore_match`` (module doc)."""
    if not pred or not gold:
        return 0.0, 0.0, 0.0
    pred_plan = _without_finish(sorted(pred, key=lambda s: s["id"]))
    gold_plan = _without_finish(sorted(gold, key=lambda s: s["id"]))
    if not pred_plan or not gold_plan:
        raise NoReferenceValue("T-Eval's plan score raises on a plan that is only FinishAction")
    weights = _weights(pred_plan, gold_plan, cosine, options)
    mapping = _matching(weights, options.threshold)
    best = [1] * len(pred_plan)
    for i in range(len(pred_plan)):
        for j in range(i):
            if mapping[i] == -1 or mapping[j] == -1:
                continue
            if mapping[i] > mapping[j]:
                best[i] = max(best[i], best[j] + 1)
    correct = max(best)
    recall, precision = correct / len(gold_plan), correct / len(pred_plan)
    return precision, recall, 2 * recall * precision / (recall + precision)


def _weights(
    pred: Sequence[Mapping[str, Any]],
    gold: Sequence[Mapping[str, Any]],
    cosine: Cosine,
    options: PlanOptions,
) -> Any:
    """T-Eval's ``bert_score_matrix``: the names' and the arguments' cosine matrices (each
    list of texts encoded at once, ``cosine_matrix``), clipped at 0, combined entry by entry
    with numpy's arithmetic (a float32 entry times a Python float is float32 on numpy 2, float64
    before) into a float64 matrix, as T-Eval's loop does."""
    import numpy as np  # heavy: only for a plan score

    names = cosine_matrix(cosine, [p["name"] for p in pred], [g["name"] for g in gold])
    args = cosine_matrix(cosine, [str(p["args"]) for p in pred], [str(g["args"]) for g in gold])
    names, args = np.maximum(names, 0), np.maximum(args, 0)
    out = np.zeros((len(pred), len(gold)))
    for i in range(len(pred)):
        for j in range(len(gold)):
            out[i][j] = names[i][j] * options.name_weight + args[i][j] * options.args_weight
    return out


def _without_finish(plan: list[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    return plan[:-1] if plan[-1]["name"] == FINISH_ACTION else plan


def _matching(weights: Any, threshold: float) -> list[int]:
    """Gold position per predicted step (-1 unmatched), from networkx as T-Eval calls it."""
    edges = [
        (i, str(j), row[j])
        for i, row in enumerate(weights)
        for j in range(len(row))
        if row[j] > threshold
    ]
    mapping = [-1] * len(weights)
    if not edges:
        return mapping
    import networkx as nx  # heavy: only when a plan has edges

    graph: Any = nx.Graph()
    for i, j, w in edges:
        graph.add_edge(i, j, weight=w)
    for a, b in nx.max_weight_matching(graph):
        if isinstance(a, int):
            mapping[a] = int(b)
        else:
            mapping[int(b)] = int(a)
    return mapping


def permutation_match(
    pred: Sequence[Mapping[str, Any]], gold: Sequence[Mapping[str, Any]]
) -> tuple[float, float, float]:
    """``(precision, recall, f1)`` by T-Eval's ``permutation_match`` (module doc)."""
    if not pred or not gold:
        raise NoReferenceValue("T-Eval's permutation strategy raises on an empty plan")
    pred_plan = [_with_prev(s) for s in pred]
    gold_plan = [_with_prev(s) for s in gold]
    for plan in (pred_plan, gold_plan):
        if plan[-1]["name"] != FINISH_ACTION:
            plan.append({"id": len(plan), "prev": [], "name": FINISH_ACTION, "args": r"\{\}"})
    if len(pred_plan) > MAX_PERMUTED:
        pred_plan = pred_plan[:MAX_PERMUTED]
    if len(gold_plan) > MAX_PERMUTED:
        gold_plan = pred_plan[:MAX_PERMUTED]  # T-Eval's slip, kept: the gold becomes the plan
    pred_plan = sorted(pred_plan, key=lambda s: s["id"])
    gold_plan = sorted(gold_plan, key=lambda s: s["id"])
    n_pred, n_gold = len(pred_plan), len(gold_plan)
    gold_deps = pred_deps = 0
    for i in range(n_gold):
        gold_plan[i]["prev"].append(i)
        gold_deps += len(gold_plan[i]["prev"])
    for i in range(n_pred):
        pred_plan[i]["prev"].append(i)
        pred_deps += len(pred_plan[i]["prev"])
    best = (0.0, 0.0, 0.0)  # f1, recall, precision
    for perm in itertools.permutations(range(max(n_pred, n_gold)), n_pred):
        kept = 0
        for i in range(n_pred):
            if perm[i] >= n_gold:
                continue
            kept += sum(1 for j in pred_plan[i]["prev"] if perm[j] in gold_plan[perm[i]]["prev"])
        recall, precision = kept / gold_deps, kept / pred_deps
        if recall + precision == 0:
            continue
        f1 = 2 * recall * precision / (recall + precision)
        if f1 > best[0]:
            best = (f1, recall, precision)
    return best[2], best[1], best[0]


def _with_prev(step: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(step))
    prev = out.get("prev", [])
    out["prev"] = list(prev) if isinstance(prev, list) else []
    return out
