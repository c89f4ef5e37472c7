import pytest
from _step_builders import APIS, REF_STEPS, act

from sandbox.eval.steps.actions import reference_actions
from sandbox.eval.steps.plan_score import longest_increasing, plan_score, similarity

GOLD = reference_actions(REF_STEPS, APIS)
A, B, C = (act(g.tool, g.api, g.args) for g in GOLD)


def test_identical_plan_scores_one():
    s = plan_score([A, B, C], GOLD)
    assert (s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0)
    assert s.matched == s.in_order == 3


def test_swapped_steps_lose_one_to_the_order():
    s = plan_score([A, C, B], GOLD)
    assert s.matched == 3 and s.in_order == 2
    assert s.precision == pytest.approx(2 / 3) and s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(2 / 3)


def test_missing_step_keeps_precision_and_costs_recall():
    s = plan_score([A, B], GOLD)
    assert s.precision == 1.0 and s.recall == pytest.approx(2 / 3)
    assert s.f1 == pytest.approx(0.8)


def test_extra_and_duplicate_steps_cost_precision():
    unknown = act(None, None, {"q": 1}, name="search_for_nothing")
    s = plan_score([A, unknown, A, B, C], GOLD)
    assert s.in_order == 3
    assert s.precision == pytest.approx(3 / 5) and s.recall == 1.0
    assert s.f1 == pytest.approx(2 * 0.6 / 1.6)


def test_empty_plan_scores_zero_and_both_empty_score_one():
    s = plan_score([], GOLD)
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    s = plan_score([A], [])
    assert s.f1 == 0.0
    s = plan_score([], [])
    assert (s.precision, s.recall, s.f1) == (1.0, 1.0, 1.0)


def test_wholly_wrong_plan_scores_zero_unlike_teval():
    # T-Eval's LIS table starts every predicted step at 1, so this plan would get P=1/2, R=1/3.
    wrong = [act("weatherly", "get_weather", {"city": "Paris"}), act("maps", "geocode", {})]
    s = plan_score(wrong, [GOLD[2]])
    assert s.matched == 0 and s.in_order == 0
    assert (s.precision, s.recall, s.f1) == (0.0, 0.0, 0.0)
    # one wrong step against one gold step: T-Eval reports F1 = 1.0 here
    assert plan_score([act("maps", "geocode", {"address": "Paris"})], [GOLD[2]]).f1 == 0.0


def test_right_api_without_the_reference_arguments_is_below_the_threshold():
    far = act("maps", "geocode", {"query": "Paris"})
    assert similarity(far, GOLD[0]) == pytest.approx(0.75)
    assert plan_score([far], [GOLD[0]]).f1 == 0.0
    far = act("maps", "geocode", {})
    assert similarity(far, GOLD[0]) < 0.8
    assert plan_score([far], [GOLD[0]]).f1 == 0.0
    near = act("maps", "geocode", {"address": "Paris, France"})
    assert similarity(near, GOLD[0]) > 0.8
    assert plan_score([near], [GOLD[0]]).f1 == 1.0


def test_similarity_weights():
    assert similarity(A, GOLD[0]) == pytest.approx(1.0)
    # same arguments object, different API: only the argument part counts
    other = act("weatherly", "get_weather", {"address": "Paris"})
    assert similarity(other, GOLD[0]) == pytest.approx(0.25)


def test_longest_increasing():
    assert longest_increasing([]) == 0
    assert longest_increasing([3, 1, 2, 5, 4]) == 3
    assert longest_increasing([2, 2, 2]) == 1


def test_a_repeated_reference_step_is_matched_in_order():
    # a reference that retries a step (internal error, then the identical call succeeds)
    gold = [GOLD[0], GOLD[1], GOLD[1]]
    s = plan_score([A, B, B], gold)
    assert s.in_order == 3 and s.f1 == 1.0
