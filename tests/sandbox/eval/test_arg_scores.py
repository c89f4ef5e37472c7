import pytest
from _step_builders import APIS, REF_STEPS, act

from sandbox.eval.steps.actions import match_actions, reference_actions
from sandbox.eval.steps.arg_scores import kv_similarity, score_arguments, value_similarity

GOLD = reference_actions(REF_STEPS, APIS)


def test_values_are_compared_as_json_values_not_quoted_text():
    # strings by their content: "Pari" vs "Paris" is one deletion over 5 characters
    assert value_similarity("Pari", "Paris") == pytest.approx(1 - 1 / 5)
    # two unrelated strings share nothing (their quotes would have made them 0.25 alike)
    assert value_similarity("abcdef", "uvwxyz") == 0.0
    assert value_similarity(3, 3) == 1.0
    assert value_similarity(30, 3) == pytest.approx(1 - 1 / 2)
    assert value_similarity({"b": 1, "a": 2}, {"a": 2, "b": 1}) == 1.0


def test_an_empty_reference_value_needs_an_empty_prediction():
    # UltraTool: len(gold) == 0 -> 1 if len(pred) == 0 else 0 (a Levenshtein of '""' vs '"x"'
    # would have given 0.667)
    assert value_similarity("", "") == 1.0
    assert value_similarity([], "") == 1.0
    assert value_similarity("x", "") == 0.0
    assert value_similarity(["a"], []) == 0.0


def test_kv_similarity_known_example():
    gold = {"city": "Paris", "days": 3}
    pred = {"city": "Pari", "unit": "c"}
    # reference keys: city (4/5) and days (missing: 0)
    assert kv_similarity(pred, gold) == pytest.approx((4 / 5 + 0) / 2)
    # union of keys: city, days, unit -> unit missing in gold scores 0 too
    assert kv_similarity(pred, gold, keys="union") == pytest.approx((4 / 5) / 3)
    assert kv_similarity({}, {}) == 1.0


def test_per_step_average_with_unmatched_reference_steps_at_zero():
    pred = [
        act("maps", "geocode", {"address": "Paris"}),
        act("weatherly", "get_forecast", {"city": "Paris", "days": 5}),
    ]
    pairs = match_actions(pred, GOLD)
    assert pairs == [(0, 0), (1, 2)]
    exact, kv = score_arguments(pred, GOLD, pairs)
    # per reference step: geocode 1 (address exact); get_weather 0 (no call matched);
    # get_forecast (city 1 + days 5 vs 3: 0) / 2 = 0.5. Mean over the 3 steps, not over values.
    assert exact.value == pytest.approx((1 + 0 + 0.5) / 3) and exact.n == 3
    assert kv.value == pytest.approx((1 + 0 + 0.5) / 3) and kv.n == 3


def test_a_step_without_reference_arguments_needs_a_call_without_arguments():
    gold = [act("weatherly", "get_weather", {})]
    assert score_arguments([act("weatherly", "get_weather", {})], gold, [(0, 0)])[1].value == 1.0
    assert (
        score_arguments([act("weatherly", "get_weather", {"city": "x"})], gold, [(0, 0)])[1].value
        == 0.0
    )


def test_canonicalisation_makes_spelling_irrelevant():
    raw = [act("weatherly", "get_forecast", {"city": " Paris ", "days": "3"})]
    canon = reference_actions(
        [REF_STEPS[2].model_copy(update={"args": {"city": " Paris ", "days": "3"}})], APIS
    )
    assert canon[0].args == {"city": "Paris", "days": 3}
    pairs = match_actions(canon, GOLD[2:])
    exact, _ = score_arguments(canon, GOLD[2:], pairs)
    assert exact.value == 1.0
    assert raw[0].args != canon[0].args  # act() does not canonicalise; actions_of does


def test_retry_with_corrected_arguments_is_the_matched_call():
    pred = [
        act("weatherly", "get_weather", {"city": "Pariss"}),
        act("weatherly", "get_weather", {"city": "Paris", "unit": "c"}),
    ]
    assert match_actions(pred, GOLD) == [(1, 1)]


def test_no_reference_step_is_not_applicable_and_no_call_scores_zero():
    exact, kv = score_arguments([], [], [])
    assert exact.value is None and kv.value is None and exact.n == 0
    exact, kv = score_arguments([], GOLD, [])
    assert (exact.value, kv.value, kv.n) == (0.0, 0.0, 3)
