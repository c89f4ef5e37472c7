"""UltraTool's argument accuracy, tool selection, awareness and file reading, case by case.

Expected values are worked by hand from ``evaluation/utils.py`` (docs/evaluation.md): steps pair
by label, values compare by ``str()`` and the normalised Levenshtein distance, the figure is the
flat mean over all reference steps; selection and awareness pair the same way.
"""

from __future__ import annotations

from typing import Any

import pytest

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.ultratool import (
    NO_GOOD,
    aware_lists,
    list_accuracy,
    param_accuracy,
    param_scores,
    select_lists,
)
from sandbox.eval.benchmarks.ultratool_parse import collect
from tests.sandbox.eval.benchmarks.cases_ultratool import (
    AWARE_CASES,
    COLLECT_CASES,
    FLAT_CASES,
    PARAM_CASES,
    PARAM_COMPLETIONS,
    SELECT_CASES,
)


@pytest.mark.parametrize(
    ("pred", "golden", "scores"),
    [c[1:] for c in PARAM_CASES + PARAM_COMPLETIONS],
    ids=[c[0] for c in PARAM_CASES + PARAM_COMPLETIONS],
)
def test_argument_scores_per_step_as_cal_param_res(
    pred: Any, golden: list[dict[str, Any]], scores: list[float]
) -> None:
    """Each reference step's score: label pairing, str() rendering, Levenshtein, \\_ unescaped."""
    assert param_scores(pred, golden) == pytest.approx(scores, abs=1e-9)


@pytest.mark.parametrize(
    ("samples", "flat"), [c[1:] for c in FLAT_CASES], ids=[c[0] for c in FLAT_CASES]
)
def test_argument_accuracy_is_the_flat_mean_over_steps(
    samples: list[tuple[Any, list[dict[str, Any]]]], flat: float
) -> None:
    """Every reference step weighs alike across samples; a sample without steps counts a 0."""
    assert param_accuracy(samples) == pytest.approx(flat, abs=1e-9)


def test_a_reference_label_that_is_no_text_has_no_reference_value() -> None:
    """UltraTool splits the reference label when a predicted label is text: it raises there."""
    with pytest.raises(NoReferenceValue):
        param_scores([{"step": "1", "param": {}}], [{"step": 1, "param": {}}])


@pytest.mark.parametrize(
    ("pred", "golden", "tools"), [c[1:] for c in SELECT_CASES], ids=[c[0] for c in SELECT_CASES]
)
def test_selected_tools_pair_as_cal_acc_for_select(
    pred: Any, golden: list[dict[str, Any]], tools: list[Any]
) -> None:
    """The tool paired with each reference step (no_good when none), \\_ unescaped."""
    chosen, wanted = select_lists(pred, golden)
    assert chosen == tools
    assert wanted == [step["tool"] for step in golden]


def test_selection_accuracies() -> None:
    """Global: samples whose tools all match; local: matching tools over all steps."""
    pairs = [(["a", "b"], ["a", "b"]), (["a", NO_GOOD], ["a", "c"]), ([], [])]
    got = list_accuracy(pairs)
    assert (got.list_accuracy, got.element_accuracy) == pytest.approx((2 / 3, 3 / 4))


@pytest.mark.parametrize(
    "pairs",
    [[([], [])], [([None], ["a"])], [([["a"]], ["a"])]],
    ids=["no elements", "a null label", "a list label"],
)
def test_accuracies_scikit_learn_refuses_have_no_reference_value(pairs: Any) -> None:
    """UltraTool's accuracy_score raises on these labels: no value is made up."""
    with pytest.raises(NoReferenceValue):
        list_accuracy(pairs)


@pytest.mark.parametrize(
    ("pred", "golden", "flags"), [c[1:] for c in AWARE_CASES], ids=[c[0] for c in AWARE_CASES]
)
def test_awareness_flags_pair_as_cal_acc_for_aware(
    pred: Any, golden: list[dict[str, Any]], flags: list[int]
) -> None:
    """The flag paired with each reference step; a step not found takes the wrong flag."""
    chosen, wanted = aware_lists(pred, golden)
    assert chosen == flags
    assert wanted == [int(step["tool"]) for step in golden]


@pytest.mark.parametrize(
    ("kind", "records", "preds", "bad"),
    [c[1:] for c in COLLECT_CASES],
    ids=[c[0] for c in COLLECT_CASES],
)
def test_prediction_files_read_as_ultratools_collectors(
    kind: Any, records: list[dict[str, Any]], preds: list[Any], bad: int
) -> None:
    """Replies are tidied, cut to their list and repaired as UltraTool does; state carries over."""
    got = collect(records, kind)
    assert (got.preds, got.bad) == (preds, bad)


def test_a_first_record_already_parsed_has_no_reference_value() -> None:
    """UltraTool's loop has no parse outcome yet for such a record (a NameError there)."""
    with pytest.raises(NoReferenceValue):
        collect([{"data": {"reference": []}, "init output": [{"step": "1"}]}], "aware")
