import pytest
from _step_builders import act

from sandbox.eval.steps.tool_selection import tool_selection

GOLD = [("maps", "geocode"), ("weatherly", "get_weather"), ("weatherly", "get_forecast")]


def test_precision_recall_f1_on_distinct_apis():
    called = [
        act("maps", "geocode"),
        act("maps", "geocode"),  # a repeat is one selection
        act("weatherly", "get_weather"),
        act("news", "headlines"),
    ]
    s = tool_selection(called, GOLD)
    assert s.precision.value == pytest.approx(2 / 3) and s.precision.n == 3
    assert s.recall.value == pytest.approx(2 / 3) and s.recall.n == 3
    assert s.f1.value == pytest.approx(2 / 3)


def test_unknown_functions_count_as_wrong_selections():
    s = tool_selection(
        [act("maps", "geocode"), act(None, None, name="fly_me")], [("maps", "geocode")]
    )
    assert s.precision.value == 0.5 and s.recall.value == 1.0


def test_nothing_called():
    s = tool_selection([], GOLD)
    assert s.precision.value is None
    assert s.recall.value == 0.0 and s.f1.value == 0.0


def test_no_reference_apis_is_not_applicable():
    s = tool_selection([act("maps", "geocode")], [])
    assert s.precision.value is None and s.recall.value is None and s.f1.value is None


def test_perfect_selection():
    s = tool_selection([act(t, a) for t, a in GOLD], reversed(GOLD))
    assert (s.precision.value, s.recall.value, s.f1.value) == (1.0, 1.0, 1.0)
