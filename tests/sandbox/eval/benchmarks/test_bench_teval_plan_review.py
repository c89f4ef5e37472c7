"""T-Eval's plan (both strategies) and review scores, case by case, against hand-worked values.

Plans follow ``PlanningEvaluator`` (docs/evaluation.md): bertscore matching with the free first
match kept, and permutation matching over dependencies with its truncation slip kept; cosines are
``token_cosine``'s. Reviews follow ``ReviewEvaluator``: the first letter after the first colon
(str), ``{"review": is_finished}`` (json).
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.teval import review_sample
from sandbox.eval.benchmarks.teval_plan import PlanOptions, permutation_match, plan_sample
from tests.sandbox.eval.benchmarks.cases_teval import (
    PERMUTATION_CASES,
    PLAN_CASES,
    PLAN_NO_VALUE,
    REVIEW_CASES,
)
from tests.sandbox.eval.benchmarks.token_cosine import token_cosine


def _datum(prediction: Any, gold: Any) -> dict[str, Any]:
    return {"prediction": prediction, "ground_truth": gold, "meta": {"prompt_type": "json"}}


@pytest.mark.parametrize(
    ("prediction", "gold", "precision", "recall", "f1", "parse"),
    [c[1:] for c in PLAN_CASES],
    ids=[c[0] for c in PLAN_CASES],
)
def test_plan_scores_as_tevals_bertscore_match(
    prediction: Any, gold: Any, precision: float, recall: float, f1: float, parse: float
) -> None:
    """Precision, recall, F1 and parse rate of one plan, T-Eval's free first match included."""
    got = plan_sample(_datum(prediction, gold), token_cosine, PlanOptions())
    expected = (precision, recall, f1, parse)
    assert (got.precision, got.recall, got.f1, got.parse_rate) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize(("prediction", "gold"), [c[1:] for c in PLAN_NO_VALUE])
def test_a_plan_of_only_finish_has_no_reference_value(prediction: Any, gold: Any) -> None:
    """T-Eval raises when nothing is left after FinishAction is dropped: no value is made up."""
    with pytest.raises(NoReferenceValue):
        plan_sample(_datum(prediction, gold), token_cosine, PlanOptions())


@pytest.mark.parametrize(
    ("pred", "gold", "precision", "recall", "f1"),
    [c[1:] for c in PERMUTATION_CASES],
    ids=[c[0] for c in PERMUTATION_CASES],
)
def test_plan_scores_as_tevals_permutation_match(
    pred: list[dict[str, Any]],
    gold: list[dict[str, Any]],
    precision: float,
    recall: float,
    f1: float,
) -> None:
    """The best F1 over every mapping of dependencies, T-Eval's gold-past-nine slip included."""
    assert permutation_match(pred, gold) == pytest.approx((precision, recall, f1), abs=1e-9)


def test_permutation_leaves_its_inputs_alone() -> None:
    """T-Eval appends to the plans it is given; here the caller's records are not changed."""
    pred = [{"id": 0, "name": "a", "args": "", "prev": []}]
    permutation_match(pred, [{"id": 0, "name": "a", "args": "", "prev": []}])
    assert pred == [{"id": 0, "name": "a", "args": "", "prev": []}]


@pytest.mark.parametrize(
    ("reply", "fmt", "answer", "quality", "parse"),
    [c[1:] for c in REVIEW_CASES],
    ids=[c[0] for c in REVIEW_CASES],
)
def test_review_scores_as_tevals_review_evaluator(
    reply: str, fmt: str, answer: Any, quality: float, parse: float
) -> None:
    """Review quality and parse rate of one reply (str: first letter; json: is_finished)."""
    datum = {
        "prediction": reply,
        "ground_truth": {"answer": answer},
        "meta_data": {"response_format": fmt},
    }
    assert review_sample(datum) == (quality, parse)
