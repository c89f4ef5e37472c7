"""An episode's turns and calls as written, for the reference protocols (``steps/replies.py``):
an empty argument text reads as ``{}``, a Finish recorded without a call is written from its
fields (or as recorded), every call keeps what it answered, and the names an episode offered
are read from its function list (first offer wins, Finish and unknown names left out)."""

from __future__ import annotations

from typing import Any

from _step_builders import APIS, call

from agents.toolenv import FINISH, FINISH_FUNCTION
from agents.trajectory import FinishCall, Node, StepCall
from mock_tools.names import NameResolver
from sandbox.eval.steps.replies import (
    WrittenCall,
    argument_text,
    calls,
    offered_names,
    parsed,
    replies,
)


def test_an_empty_argument_text_is_the_empty_object() -> None:
    assert argument_text(None) == "{}"
    assert argument_text(" \n") == "{}"
    assert argument_text(' {"a": 1} ') == '{"a": 1}'
    assert parsed(None) == {}
    assert parsed('{"a": [1, 2]}') == {"a": [1, 2]}
    assert parsed("city=Paris") == "city=Paris"


def finish_only(nid: int, finish: FinishCall) -> Node:
    return Node(id=nid, kind="finish", content=None, finish=finish)


def test_a_finish_recorded_without_a_call_is_written_from_its_fields() -> None:
    """No recorded argument text: the JSON of return_type and final_answer, characters kept;
    a recorded text is kept as the model wrote it; a turn without text has an empty thought."""
    built = finish_only(0, FinishCall(return_type="give_answer", final_answer="Zürich: 20°C"))
    recorded = finish_only(
        1, FinishCall(return_type="give_up_and_restart", arguments='{"return_type":"x"}')
    )
    got = replies([built, recorded])
    assert [(r.thought, r.call) for r in got] == [
        (
            "",
            WrittenCall(FINISH, '{"return_type": "give_answer", "final_answer": "Zürich: 20°C"}'),
        ),
        ("", WrittenCall(FINISH, '{"return_type":"x"}')),
    ]


def test_every_call_of_the_path_keeps_its_text_and_answer() -> None:
    """Finish is no call; a call without an observation answered nothing (None)."""
    geo = call("maps", "geocode", {"address": "Paris"})
    silent = StepCall(id="s", name="get_weather_for_weatherly", arguments="", args={})
    finish = StepCall(id="f", name=FINISH, arguments="{}", args={})
    nodes = [
        Node(id=0, kind="action", calls=[geo, silent]),
        Node(id=1, parent=0, kind="finish", calls=[finish]),
    ]
    assert geo.observation is not None
    assert calls(nodes) == [
        WrittenCall("geocode_for_maps", '{"address": "Paris"}', geo.observation.content),
        WrittenCall("get_weather_for_weatherly", "", None),
    ]


def fn(name: Any) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name}}


def test_the_names_an_episode_offered_first_offer_wins() -> None:
    functions = [
        {"type": "function"},
        fn(None),
        FINISH_FUNCTION,
        fn("teleport"),
        fn("geocode_for_maps"),
        fn("Geocode_For_Maps"),
        fn("get_weather_for_weatherly"),
    ]
    assert offered_names(functions, NameResolver.for_apis(APIS)) == {
        ("maps", "geocode"): "geocode_for_maps",
        ("weatherly", "get_weather"): "get_weather_for_weatherly",
    }
