"""The project's plan score at its edges (docs/evaluation.md, "Plan"): argument similarity over
the union of keys, so a call padded with arguments the reference lacks falls below the
threshold, and the score of an empty plan against an empty reference, reported whole."""

from __future__ import annotations

from sandbox.eval.steps.actions import Action
from sandbox.eval.steps.matching import MatchMemo
from sandbox.eval.steps.plan_score import PlanScore, plan_score, similarity


def geocode(**args: object) -> Action:
    return Action(tool="maps", api="geocode", name="geocode_for_maps", args=args)


def test_arguments_the_reference_lacks_lower_the_step_similarity() -> None:
    """Same API, the reference's one argument right and four more: args similarity 1/5, so
    0.75 + 0.25 x 0.2 = 0.8, not above the threshold: the step is not the planned one."""
    padded = geocode(address="Paris", zoom=3, lang="fr", limit=1, format="json")
    gold = geocode(address="Paris")
    assert similarity(padded, gold) == 0.75 + 0.25 * (1 / 5)
    assert plan_score([padded], [gold]).f1 == 0.0
    three_extra = geocode(address="Paris", zoom=3, lang="fr", limit=1)
    assert plan_score([three_extra], [gold]).f1 == 1.0  # 0.75 + 0.25 x 1/4 = 0.8125


def test_an_empty_plan_for_an_empty_reference_is_perfect_with_nothing_counted() -> None:
    assert plan_score([], []) == PlanScore(
        precision=1.0, recall=1.0, f1=1.0, n_pred=0, n_gold=0, matched=0, in_order=0
    )


def test_a_plan_against_an_empty_reference_scores_zero_everywhere() -> None:
    assert plan_score([geocode(address="Paris")], []) == PlanScore(
        precision=0.0, recall=0.0, f1=0.0, n_pred=1, n_gold=0, matched=0, in_order=0
    )


def test_searched_plan_matchings_are_kept_for_the_next_episodes() -> None:
    """Two calls above the threshold for one step need a search; its result is remembered."""
    memo: MatchMemo = {}
    pred = [geocode(address="Paris"), geocode(address="Paris")]
    got = plan_score(pred, [geocode(address="Paris")], memo=memo)
    assert (got.matched, got.in_order, got.precision, got.recall) == (1, 1, 0.5, 1.0)
    assert list(memo.values()) == [[(0, 0)]]


def other(api: str) -> Action:
    return Action(tool="weatherly", api=api, name=f"{api}_for_weatherly", args={"city": "Paris"})


def test_an_early_extra_call_of_a_later_step_does_not_break_the_order() -> None:
    """Plan [geocode, weather, forecast, geocode] for reference [weather, forecast, geocode]:
    the geocode at the step's own place (offset 1, not the first one's 2) is matched, so all
    three steps are in order: recall 1, precision 3/4."""
    pred = [geocode(address="Paris"), other("get_weather"), other("get_forecast")]
    pred.append(geocode(address="Paris"))
    gold = [other("get_weather"), other("get_forecast"), geocode(address="Paris")]
    got = plan_score(pred, gold)
    assert (got.matched, got.in_order, got.precision, got.recall) == (3, 3, 0.75, 1.0)


def test_the_position_tie_break_never_outweighs_an_argument_difference() -> None:
    """The geocode step is matched to the exact call though it is nine places away, not to the
    call one character off at its own place (similarity 0.75 + 0.25 x 99/100): ordering is
    judged after matching, so here the plan is out of order (1 of 3 calls, 1 of 2 steps)."""
    address = "a" * 100
    near = geocode(address="b" + address[1:])
    filler = [Action(name=f"x{k}") for k in range(7)]
    pred = [near, *filler[:4], other("get_weather"), *filler[4:], geocode(address=address)]
    gold = [geocode(address=address), other("get_weather")]
    got = plan_score(pred, gold)
    assert (got.n_pred, got.matched, got.in_order) == (10, 2, 1)
