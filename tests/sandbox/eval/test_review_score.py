from _step_builders import act

from agents.trajectory import Status
from sandbox.eval.steps.review_score import review_scores

GEO = {"address": "Paris"}


def test_no_failure_is_not_applicable():
    r = review_scores([act("maps", "geocode", GEO)], Status.answered)
    assert r.recovery.value is None and r.no_blind_repeat.value is None and r.failures == 0


def test_one_identical_retry_after_an_internal_error_is_allowed():
    actions = [act("maps", "geocode", GEO, failed=True), act("maps", "geocode", GEO)]
    r = review_scores(actions, Status.answered)
    assert r.recovery.value == 1.0 and r.no_blind_repeat.value == 1.0
    assert r.failures == 1 and r.repeats_after_failure == 1


def test_repeating_a_failing_call_twice_is_blind():
    actions = [act("maps", "geocode", GEO, failed=True)] * 3
    r = review_scores(actions, Status.gave_up)
    assert r.recovery.value == 0.0 and r.recovery.n == 1
    assert r.no_blind_repeat.value == 0.0 and r.repeats_after_failure == 2


def test_changing_the_arguments_is_not_a_repeat_and_canonical_args_are_the_identity():
    actions = [
        act("weatherly", "get_forecast", {"city": "Paris", "days": 30}, failed=True),
        act("weatherly", "get_forecast", {"city": "Paris", "days": 3}),
        act("maps", "geocode", GEO, failed=True),
        act("maps", "geocode", GEO, failed=True),
        act("maps", "geocode", GEO),
    ]
    r = review_scores(actions, Status.answered)
    assert r.failures == 3
    # forecast: 0 repeats (ok); geocode: 2 repeats after its first failure (blind)
    assert r.no_blind_repeat.value == 0.5 and r.no_blind_repeat.n == 2
    assert r.recovery.value == 1.0


def test_budget_exhausted_after_a_fault_is_not_a_recovery():
    actions = [act("maps", "geocode", GEO, failed=True), act("maps", "geocode", {"address": "x"})]
    r = review_scores(actions, Status.budget_exhausted)
    assert r.recovery.value == 0.0 and r.no_blind_repeat.value == 1.0
