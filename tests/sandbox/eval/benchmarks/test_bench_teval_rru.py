"""T-Eval's reason, retrieve and understand, case by case, against values worked by hand.

Each case is one datum of T-Eval's RRU files (``ReasonRetrieveUnderstandEvaluator``): the reply
and the ground truth. Expected values follow its arithmetic (docs/evaluation.md): thought, the
cosine of the two thoughts (here with the word-count encoder of ``token_cosine``, same wiring);
name, equality; args (v2), per gold key ``str(pred) == str(gold)`` summed over ``keys + 1e-5``,
1 when both are empty, 0 when only the gold is; args (v1), the cosine of the two objects'
``str()``; parse_rate, the reply was read.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandbox.eval.benchmarks.teval import rru_sample
from tests.sandbox.eval.benchmarks.cases_teval import RRU_JSON_CASES as JSON_CASES
from tests.sandbox.eval.benchmarks.cases_teval import RRU_STR_CASES as STR_CASES
from tests.sandbox.eval.benchmarks.cases_teval import STR_GOLD
from tests.sandbox.eval.benchmarks.token_cosine import token_cosine


@pytest.mark.parametrize(
    ("prediction", "truth", "thought", "name", "args_v2", "args_v1", "parse"),
    [c[1:] for c in JSON_CASES],
    ids=[c[0] for c in JSON_CASES],
)
def test_json_replies_score_as_tevals_rru_evaluator(
    prediction: Any,
    truth: Any,
    thought: float,
    name: float,
    args_v2: float,
    args_v1: float,
    parse: float,
) -> None:
    """Reason, retrieve, understand (v2 and v1) and parse rate of one JSON-format datum."""
    datum = {
        "prediction": prediction,
        "ground_truth": truth,
        "meta_data": {"response_format": "json"},
    }
    v2 = rru_sample(datum, token_cosine)
    v1 = rru_sample(datum, token_cosine, understand="v1")
    got = (v2.thought, v2.name, v2.args, v1.args, v2.parse_rate)
    assert got == pytest.approx((thought, name, args_v2, args_v1, parse), abs=1e-9)


@pytest.mark.parametrize(
    ("eval_type", "prediction", "expected", "parse"),
    [c[1:] for c in STR_CASES],
    ids=[c[0] for c in STR_CASES],
)
def test_str_replies_score_as_tevals_rru_evaluator(
    eval_type: str, prediction: str, expected: float, parse: float
) -> None:
    """A str-format datum scores only its own dimension (name by T-Eval's a.b rule)."""
    datum = {
        "prediction": prediction,
        "ground_truth": STR_GOLD,
        "meta_data": {"response_format": "str"},
    }
    got = rru_sample(datum, token_cosine, default_format="str", eval_type=eval_type)
    value = {"retrieve": got.name, "understand": got.args, "reason": got.thought}[eval_type]
    assert (value, got.parse_rate) == pytest.approx((expected, parse), abs=1e-9)


def test_finish_action_retrieve_str() -> None:
    """The gold FinishAction is found by T-Eval's FinishAction rule."""
    truth = json.dumps({"thought": "", "name": "FinishAction", "args": {}})
    datum = {
        "prediction": "FinishAction",
        "ground_truth": truth,
        "meta_data": {"response_format": "str"},
    }
    assert rru_sample(datum, token_cosine, default_format="str", eval_type="retrieve").name == 1
