"""What counts as re-issuing a failing call (docs/evaluation.md, "Review / recovery"): the same
API, whatever the function name it was called by, and the same canonical arguments; two tools'
APIs of the same name are different calls, and so are other arguments."""

from __future__ import annotations

from agents.trajectory import Status
from sandbox.eval.steps.actions import Action
from sandbox.eval.steps.review_score import review_scores


def failing(tool: str | None, api: str | None, name: str, **args: object) -> Action:
    return Action(tool=tool, api=api, name=name, args=args, failed=True)


def counts(actions: list[Action], status: Status) -> tuple[object, ...]:
    """(failures, repeats after a failure, no_blind_repeat's value and units)."""
    r = review_scores(actions, status)
    return r.failures, r.repeats_after_failure, r.no_blind_repeat.value, r.no_blind_repeat.n


def test_a_retry_under_another_spelling_of_the_api_is_the_same_call() -> None:
    actions = [
        failing("maps", "geocode", "geocode_for_maps", address="Paris"),
        failing("maps", "geocode", "Geocode_For_Maps", address="Paris"),
        failing("maps", "geocode", "maps.geocode", address="Paris"),
    ]
    assert counts(actions, Status.gave_up) == (3, 2, 0.0, 1)


def test_apis_of_the_same_name_on_two_tools_are_different_calls() -> None:
    actions = [
        failing("maps", "search", "search_for_maps", q="Paris"),
        failing("news", "search", "search_for_news", q="Paris"),
        failing("books", "search", "search_for_books", q="Paris"),
    ]
    assert counts(actions, Status.gave_up) == (3, 0, 1.0, 3)


def test_retries_with_other_arguments_are_no_repeats() -> None:
    actions = [
        failing("maps", "geocode", "geocode_for_maps", address="Pari"),
        failing("maps", "geocode", "geocode_for_maps", address="Paris"),
        failing("maps", "geocode", "geocode_for_maps", address="Paris, FR"),
    ]
    assert counts(actions, Status.answered) == (3, 0, 1.0, 3)


def test_unknown_functions_are_told_apart_by_name() -> None:
    actions = [
        failing(None, None, "teleport"),
        failing(None, None, "warp"),
        failing(None, None, "warp"),
    ]
    assert counts(actions, Status.gave_up) == (3, 1, 1.0, 2)  # one identical retry is allowed
