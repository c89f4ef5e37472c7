"""Argument values as ``understand`` compares them (docs/evaluation.md, "Understand"): the same
JSON value is the same canonical JSON (an integer is not a float, a boolean not a number), and a
key the agent left out scores 0 even where the reference value is empty or null."""

from __future__ import annotations

from sandbox.eval.steps.arg_scores import ArgumentScores
from sandbox.eval.steps.similarity import same_value, value_similarity


def test_the_same_json_value_is_the_same_canonical_json() -> None:
    assert same_value("Paris", "Paris") and same_value(3, 3)
    assert same_value({"b": 1, "a": [1, 2]}, {"a": [1, 2], "b": 1})
    assert same_value(2.5, 2.5) and same_value(None, None)
    assert not same_value(1, 1.0) and not same_value(1.0, 1)
    assert not same_value(True, 1) and not same_value(1, True)
    assert not same_value("5", 5) and not same_value(5, "5")
    assert not same_value([1], [1.0]) and not same_value({"a": 1}, {"a": 1.0})
    assert same_value([True, 2.5], [True, 2.5])


def test_a_left_out_key_scores_zero_even_against_an_empty_reference_value() -> None:
    """Leaving ``note`` out is not giving it empty: 0 on both measures, where an empty or
    null prediction scores 1 against the empty reference."""
    scores = ArgumentScores()
    scores.add({}, {"note": ""})
    scores.add({}, {"note": None})
    scores.add({"note": ""}, {"note": ""})
    scores.add({"note": None}, {"note": None})
    assert scores.exact == [0.0, 0.0, 1.0, 1.0]
    assert scores.similarity == [0.0, 0.0, 1.0, 1.0]


def test_an_empty_prediction_for_a_non_empty_reference_value_scores_zero() -> None:
    """Not the edit similarity of "" to the text (which is 0 anyway for strings) but 0 for any
    empty value: an empty list against a list, null against a number."""
    assert value_similarity("", "Paris") == 0.0
    assert value_similarity([], ["Paris"]) == 0.0
    assert value_similarity(None, 5) == 0.0
    assert value_similarity({}, {"a": 1}) == 0.0


def test_a_value_against_an_empty_reference_value_scores_zero() -> None:
    assert value_similarity("x", None) == 0.0
    assert value_similarity("x", "") == 0.0
    assert value_similarity(0, []) == 0.0
