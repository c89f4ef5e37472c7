from _step_builders import APIS, call, finish_node

from agents.trajectory import Node, StepCall
from mock_tools.names import NameResolver
from sandbox.eval.steps.format_score import (
    SchemaValidators,
    format_alignment,
    thought_only,
    turn_well_formed,
)

NO_THOUGHT = "a thought without an action"  # the ToolBench importer's reason
NO_CALL = "it contained no function call"  # the agents' step's reason

RESOLVER = NameResolver(APIS.keys())
OFFERED = set(APIS)


def _ok(node: Node, offered: set = OFFERED) -> bool:
    return turn_well_formed(node, offered, RESOLVER, SchemaValidators(APIS))


def _action(*calls: StepCall, nid: int = 0) -> Node:
    return Node(id=nid, kind="action", calls=list(calls))


def test_valid_call_and_canonical_coercion_are_well_formed():
    assert _ok(_action(call("weatherly", "get_weather", {"city": "Paris"})))
    # "3" is canonicalised to 3 for an integer parameter, as the mock server does
    assert _ok(_action(call("weatherly", "get_forecast", {"city": "Paris", "days": "3"})))
    # resolved from the function name alone
    assert _ok(_action(call("maps", "geocode", {"address": "x"}, resolved=False)))


def test_schema_violations_are_not_well_formed():
    assert not _ok(_action(call("weatherly", "get_weather", {})))  # missing required
    assert not _ok(_action(call("weatherly", "get_weather", {"city": "P", "unit": "kelvin"})))
    assert not _ok(_action(call("weatherly", "get_forecast", {"city": "P", "days": "many"})))


def test_unparseable_arguments_and_unknown_functions():
    assert not _ok(_action(call("maps", "geocode", raw='{"address": "Par')))
    unknown = StepCall(id="x", name="teleport_for_maps", arguments="{}", args={})
    assert not _ok(_action(unknown))
    # an existing API that the task does not offer
    assert not _ok(
        _action(call("maps", "geocode", {"address": "x"})), {("weatherly", "get_weather")}
    )


def test_one_bad_call_spoils_the_turn():
    good = call("maps", "geocode", {"address": "x"})
    bad = call("weatherly", "get_weather", {})
    assert not _ok(_action(good, bad))


def test_finish_turns():
    assert _ok(finish_node(0, None))
    bad = finish_node(0, None)
    bad.calls[0].args = {"return_type": "shrug"}
    assert not _ok(bad)
    # a Finish recorded only as ``finish`` (no call entry) is well-formed
    assert _ok(Node(id=0, kind="finish", finish=bad.finish))


def test_share_over_turns_skips_model_errors():
    nodes = [
        _action(call("maps", "geocode", {"address": "x"}), nid=0),
        Node(id=1, parent=0, kind="invalid", content="I think...", format_error="no call"),
        Node(id=2, parent=0, kind="error", error="timeout"),
        finish_node(3, 0),
    ]
    m = format_alignment(nodes, OFFERED, RESOLVER, SchemaValidators(APIS))
    assert m.n == 3 and m.value == 2 / 3
    assert format_alignment([], OFFERED, RESOLVER, SchemaValidators(APIS)).value is None


def test_thought_only_turns_are_not_malformed():
    # ToolBench's loop accepts a turn of text without a call (a "Thought" node); the importer
    # and the agents' step record it as invalid for having no call. It is left out of the share:
    # a flawless imported episode with one such turn scores 1, not 3/4.
    nodes = [
        _action(call("maps", "geocode", {"address": "x"}), nid=0),
        Node(id=1, parent=0, kind="invalid", content="Let me think.", format_error=NO_THOUGHT),
        Node(id=2, parent=1, kind="invalid", content="Hmm.", format_error=NO_CALL),
        finish_node(3, 2),
    ]
    assert thought_only(nodes[1]) and thought_only(nodes[2])
    m = format_alignment(nodes, OFFERED, RESOLVER, SchemaValidators(APIS))
    assert (m.value, m.n) == (1.0, 2)
    # a text adapter's parse failure is malformed, and so is a silent empty turn
    unparsed = Node(id=4, kind="invalid", content="Action: ???", format_error="no Action Input")
    empty = Node(id=5, kind="invalid", content="", format_error=NO_CALL)
    assert not thought_only(unparsed) and not thought_only(empty)
    m = format_alignment([*nodes, unparsed, empty], OFFERED, RESOLVER, SchemaValidators(APIS))
    assert (m.value, m.n) == (0.5, 4)
