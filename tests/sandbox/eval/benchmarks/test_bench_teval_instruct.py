"""T-Eval's instruct score, case by case, against values worked by hand from its evaluator.

Each case is one datum of T-Eval's instruct file: the reply, the ground truth, the response
format. Expected ``(format, args_em)`` follow ``InstructEvaluator`` (docs/evaluation.md): an
unreadable reply scores (0, 0); a readable one scores format 1 and ``args_em`` = (1 for the same
action + 1 per ground-truth key whose value ``==`` the prediction's, a missing key read as
``""``) / (keys + 1).
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.teval import instruct_sample
from tests.sandbox.eval.benchmarks.cases_teval import INSTRUCT_CASES as CASES
from tests.sandbox.eval.benchmarks.cases_teval import JSON_TEMPLATE, STR_TEMPLATE


@pytest.mark.parametrize(
    ("fmt", "prediction", "action", "args", "fmt_score", "em"),
    [c[1:] for c in CASES],
    ids=[c[0] for c in CASES],
)
def test_instruct_sample_matches_tevals_arithmetic(
    fmt: str, prediction: Any, action: str, args: dict[str, Any], fmt_score: float, em: float
) -> None:
    """Each reply scores the format and args_em T-Eval's InstructEvaluator gives it."""
    template = JSON_TEMPLATE if fmt == "json" else STR_TEMPLATE
    datum = {
        "template": template,
        "prediction": prediction,
        "ground_truth": {"action": action, "args": args},
        "meta_data": {"response_format": fmt},
    }
    score = instruct_sample(datum)
    assert (score.format, score.args_em) == pytest.approx((fmt_score, em), abs=1e-9)


def test_a_template_teval_cannot_parse_has_no_reference_value() -> None:
    """A template T-Eval's formatter rejects raises there: no value, not a made-up score."""
    datum = {
        "template": {**STR_TEMPLATE, "thought_start": "Thought: {"},
        "prediction": "Thought: t\nAction: get\nAction Input: {}",
        "ground_truth": {"action": "get", "args": {}},
        "meta_data": {"response_format": "str"},
    }
    with pytest.raises(NoReferenceValue):
        instruct_sample(datum)
