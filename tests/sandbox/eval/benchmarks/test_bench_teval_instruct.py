"""T-Eval's instruct score, case by case, against values worked by hand from its evaluator.

Each case is one datum of T-Eval's instruct file: the reply, the ground truth, the response
format. Expected ``(format, args_em)`` follow ``InstructEvaluator`` (docs/evaluation.md): an
unreadable reply scores (0, 0); a readable one scores format 1 and ``args_em`` = (1 for the same
action + 1 per ground-truth key whose value ``==`` the prediction's, a missing key read as
``""``) / (keys + 1).
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.teval import instruct_sample
from sandbox.eval.benchmarks.teval_files import FILES, score_file
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


ARGS_EM = {  # code: (gold keys, keys answered right, action right) -> args_em
    "0": (0, 0, False),  # 0 / 1
    "1": (0, 0, True),  # 1 / 1
    "h": (1, 0, True),  # 1 / 2
    "o": (2, 0, True),  # 1 / 3
    "t": (2, 1, True),  # 2 / 3
    "q": (3, 0, True),  # 1 / 4
    "Q": (3, 2, True),  # 3 / 4
}


def _instruct_datum(code: str) -> dict[str, Any]:
    keys, right, named = ARGS_EM[code]
    gold = {f"k{i}": i for i in range(keys)}
    answer = {k: (v if i < right else "wrong") for i, (k, v) in enumerate(gold.items())}
    name = "api" if named else "other"
    reply = json.dumps({"thought": "t", "name": name, "args": answer})
    return {
        "template": JSON_TEMPLATE,
        "prediction": reply,
        "ground_truth": {"action": "api", "args": gold},
        "meta_data": {"response_format": "json"},
    }


def test_instruct_figures_are_numpys_mean_rounded_as_numpy_rounds() -> None:
    """T-Eval takes np.round(np.mean(...), 4): these 32 args_em values sum to 13, numpy's pairwise
    mean is 0.40625 exactly and rounds half to even to 0.4062, where a left-to-right sum gives
    0.40625000000000006 and 0.4063."""
    order = "q1000oqqqhqtot0Qooht1ooohohho0h1"
    data = {str(i): _instruct_datum(code) for i, code in enumerate(order)}
    values = [instruct_sample(d).args_em for d in data.values()]
    assert len(values) == 32 and sum(values) / 32 != 13 / 32
    figures, scored, left = score_file(FILES["instruct_"], data, cosine=lambda a, b: 0.0)
    assert (scored, left) == (32, 0)
    assert figures["json_args_em_metric"] == 0.4062
    assert figures["json_format_metric"] == 1.0
