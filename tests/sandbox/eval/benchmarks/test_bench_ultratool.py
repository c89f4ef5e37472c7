"""UltraTool's argument accuracy, tool selection, awareness and file reading, case by case.

Expected values are worked by hand from ``evaluation/utils.py`` (docs/evaluation.md): steps pair
by label, values compare by ``str()`` and the normalised Levenshtein distance, the figure is the
flat mean over all reference steps; selection and awareness pair the same way.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.rounding import np_round
from sandbox.eval.benchmarks.ultratool import (
    NO_GOOD,
    aware_lists,
    list_accuracy,
    param_accuracy,
    param_scores,
    select_lists,
)
from sandbox.eval.benchmarks.ultratool_files import score_task
from sandbox.eval.benchmarks.ultratool_parse import Collected, collect
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


@pytest.mark.parametrize(
    ("pairs", "element"),
    [
        ([(["5", "x"], [5, "x"])], 1.0),
        ([([5.0, True, "x"], ["5.0", "True", "x"])], 1.0),
        ([([True, 2], [1, 2.0])], 1.0),
        ([([1, 2, 3], ["1", "2", "3"])], 0.0),
    ],
    ids=[
        "a number among text labels is its text",
        "floats and booleans written as str writes them",
        "numbers compare as numbers",
        "text against numbers has no equal element",
    ],
)
def test_element_accuracy_compares_labels_as_scikit_learn_does(pairs: Any, element: float) -> None:
    """Each side's labels are one numpy array (UltraTool's scikit-learn 1.2.2 on numpy 1.24):
    a reference label 5 among text labels equals a predicted "5"; the list accuracy keeps
    Python's == of the lists, where it does not."""
    got = list_accuracy(pairs)
    assert got.element_accuracy == element
    assert got.list_accuracy == (1.0 if pairs[0][0] == pairs[0][1] else 0.0)


def test_step_scores_and_their_mean_are_numpys_means() -> None:
    """UltraTool averages every step with numpy.mean (pairwise sums): these 32 step scores sum
    to 15, numpy's mean is 0.46875 exactly and rounds (half to even) to 0.4688, where Python's
    left-to-right sum gives 0.4687499999999999 and 0.4687."""
    steps = {  # predicted value, reference value: the step's score
        "h": ("a", "ab"),  # 1/2
        "1": ("abc", "abc"),  # 1
        "0": (None, "abc"),  # the key missing: 0
        "t": ("ab", "abc"),  # 2/3
        "o": ("a", "abc"),  # 1/3
    }
    order = "h1h0ht0o101000h10oott1h10th0hhtt"
    cases = []
    for code in order:
        pred, gold = steps[code]
        param = {} if pred is None else {"k": pred}
        cases.append(([{"step": "1 s", "param": param}], [{"step": "1 s", "param": {"k": gold}}]))
    flat = [s for p, g in cases for s in param_scores(p, g)]
    assert len(flat) == 32 and np_round(sum(flat) / 32) == 0.4687
    assert param_accuracy(cases) == float(np.mean(flat)) == 0.46875
    read = Collected(preds=[p for p, _ in cases], goldens=[g for _, g in cases], bad=0)
    assert score_task("param", read).local == 0.4688


def test_list_accuracy_is_rounded_as_python_rounds_and_element_as_numpy() -> None:
    """1 right of 160: UltraTool prints round(0.00625, 4) = 0.0063 for the list accuracy (a
    Python float) and 0.0062 for the element accuracy (a numpy float)."""
    read = Collected(
        preds=[[{"step": "1 s", "tool": "x" if i == 0 else "y"}] for i in range(160)],
        goldens=[[{"step": "1 s", "tool": "x"}]] * 160,
        bad=0,
    )
    figures = score_task("select", read)
    assert (figures.global_, figures.local) == (0.0063, 0.0062)
