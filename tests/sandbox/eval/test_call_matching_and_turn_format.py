"""How executed calls become actions and are paired with reference steps, and how a turn's
format is judged (docs/evaluation.md: "Matching executed calls to reference steps", "Well-formed
turn"): names resolved from the call's own fields, every tool call an action, pairs chosen by
count, then argument similarity over the union of keys, then closeness of position; schema
verdicts per API and arguments, a suite's broken schema checking nothing."""

from __future__ import annotations

from typing import Any

from _step_builders import APIS, call

from agents.toolenv import FINISH
from agents.trajectory import FinishCall, Node, StepCall
from mock_tools.models import ApiSpec
from mock_tools.names import NameResolver
from sandbox.eval.steps.actions import Action, actions_of, match_actions, resolve_call
from sandbox.eval.steps.format_score import SchemaValidators, format_alignment
from sandbox.eval.steps.matching import MatchMemo
from sandbox.eval.steps.measure import Measure

RESOLVER = NameResolver.for_apis(APIS)
WEATHER = ("weatherly", "get_weather")


def fields(tool: str, api: str) -> StepCall:
    return StepCall(id="c", name="anything", arguments="{}", args={}, tool=tool, api=api)


def test_a_call_is_resolved_from_its_own_fields_before_its_name() -> None:
    """Recorded fields in another spelling resolve to the suite's API; fields the suite lacks
    are kept as recorded (a choice of that API, not an unknown name)."""
    assert resolve_call(fields("weatherly", "get_weather_for_weatherly"), RESOLVER) == WEATHER
    assert resolve_call(fields("weatherly", "teleport"), RESOLVER) == ("weatherly", "teleport")


def test_every_tool_call_of_a_turn_is_an_action_whatever_stands_before_it() -> None:
    """A turn that calls Finish and then a tool: the tool call is an action of that node; a
    turn without text gives its actions an empty thought."""
    finish = StepCall(id="f", name=FINISH, arguments="{}", args={})
    nodes = [
        Node(id=3, kind="action", content=None, calls=[call("maps", "geocode")]),
        Node(id=7, parent=3, kind="action", content="Both.", calls=[finish, call(*WEATHER)]),
    ]
    got = actions_of(nodes, APIS, RESOLVER)
    assert [(a.key, a.node, a.thought) for a in got] == [
        (("maps", "geocode"), 3, ""),
        (WEATHER, 7, "Both."),
    ]


def geocode(address: str, **extra: Any) -> Action:
    return Action(
        tool="maps", api="geocode", name="geocode_for_maps", args={"address": address, **extra}
    )


def test_an_unknown_call_does_not_stop_the_matching() -> None:
    pred = [Action(name="teleport"), geocode("Paris")]
    assert match_actions(pred, [geocode("Paris")]) == [(1, 0)]


def test_arguments_are_compared_over_the_union_of_keys() -> None:
    """An extra argument the reference lacks makes a call less like it: the call with exactly
    the reference's arguments is matched, though it comes later."""
    pred = [geocode("Paris", zoom=3), geocode("Paris")]
    assert match_actions(pred, [geocode("Paris")]) == [(1, 0)]


def test_equal_candidates_are_paired_in_order() -> None:
    """A reference that repeats a step: the repeats pair first with first, not crosswise."""
    pred = [geocode("Paris"), geocode("Paris")]
    assert match_actions(pred, [geocode("Paris"), geocode("Paris")]) == [(0, 0), (1, 1)]


def test_the_closest_position_wins_among_equal_candidates() -> None:
    """Three identical calls for the one geocode step, third in the reference: the third call
    (no offset) is its pair, not the first (offset 2)."""
    weather = Action(tool="weatherly", api="get_weather", name="w", args={"city": "Paris"})
    forecast = Action(tool="weatherly", api="get_forecast", name="f", args={"city": "Paris"})
    pred = [geocode("Paris"), geocode("Paris"), geocode("Paris")]
    assert match_actions(pred, [weather, forecast, geocode("Paris")]) == [(2, 2)]


def test_argument_similarity_outweighs_position() -> None:
    """The exact call ten positions away beats a call one character off (similarity 332/333)
    right at the reference's position."""
    address = "a" * 333
    pred = [geocode("b" + address[1:]), *[Action(name=f"x{k}") for k in range(8)], geocode(address)]
    assert match_actions(pred, [geocode(address)]) == [(9, 0)]


def test_searched_matchings_are_kept_for_the_next_episodes() -> None:
    """Two calls competing for one step need a search; its result is remembered."""
    memo: MatchMemo = {}
    pred = [geocode("Paris"), geocode("Pari")]
    assert match_actions(pred, [geocode("Paris")], memo=memo) == [(0, 0)]
    assert list(memo.values()) == [[(0, 0)]]
    assert match_actions(pred, [geocode("Paris")], memo=memo) == [(0, 0)]


def test_each_call_gets_the_verdict_of_its_own_arguments() -> None:
    """Verdicts are remembered per API and arguments, never shared between arguments."""
    checks = SchemaValidators(APIS)
    forecast = ("weatherly", "get_forecast")
    assert checks.errors(forecast, {"city": "Paris", "days": 3}) == []
    assert checks.errors(forecast, {"city": "Paris", "days": "three"}) == [
        "'three' is not of type 'integer'"
    ]
    assert checks.errors(forecast, {"city": "Paris", "days": 3}) == []
    assert checks.errors(None, {"return_type": "give_answer", "final_answer": "x"}) == []


def test_arguments_that_are_no_json_are_checked_against_their_own_api() -> None:
    """A hand-built call may hold Python values JSON cannot write: still its API's schema."""
    checks = SchemaValidators(APIS)
    assert checks.errors(WEATHER, {"city": "Paris", "blob": b"raw"}) == []
    assert checks.errors(WEATHER, {"blob": b"raw"}) == ["'city' is a required property"]


def test_an_api_whose_schema_is_broken_checks_nothing() -> None:
    """A suite's invalid JSON Schema is no reason to call every turn malformed."""
    broken = {
        ("net", "ping"): ApiSpec(
            name="ping", parameters={"type": "object", "properties": {"host": {"type": 12}}}
        )
    }
    checks = SchemaValidators(broken)
    assert checks.errors(("net", "ping"), {"host": 1}) == []
    assert checks.errors(("net", "ping"), {"host": 2}) == []


def test_a_thought_turn_takes_no_part_in_the_format_share() -> None:
    """A node of kind ``thought`` (text, no call) is neither well-formed nor malformed."""
    nodes = [
        Node(id=0, kind="thought", content="Let me think."),
        Node(
            id=1,
            parent=0,
            kind="action",
            content="Weather.",
            calls=[call(*WEATHER, {"city": "Paris"})],
        ),
        Node(
            id=2,
            parent=1,
            kind="finish",
            calls=[
                StepCall(
                    id="f", name=FINISH, arguments="{}", args={"return_type": "give_up_and_restart"}
                )
            ],
            finish=FinishCall(return_type="give_up_and_restart"),
        ),
    ]
    offered = {WEATHER}
    got = format_alignment(nodes, offered, RESOLVER, SchemaValidators(APIS))
    assert got == Measure(value=1.0, n=2)


def test_a_turn_flagged_with_a_format_error_is_malformed_whatever_its_calls() -> None:
    """An adapter that recovered a call but flagged the turn's format: malformed."""
    flagged = Node(
        id=0,
        kind="action",
        content="Weather.",
        calls=[call(*WEATHER, {"city": "Paris"})],
        format_error="text after the call",
    )
    clean = flagged.model_copy(update={"format_error": None})
    checks = SchemaValidators(APIS)
    assert format_alignment([flagged], {WEATHER}, RESOLVER, checks) == Measure(value=0.0, n=1)
    assert format_alignment([clean], {WEATHER}, RESOLVER, checks) == Measure(value=1.0, n=1)
