"""Numbers JSON cannot hold: refused in what a client sends, named in what a tool answers.

What it protects: the parse hooks refuse NaN, Infinity and overflowing literals; first_non_finite
finds one anywhere and says where; finite_json names each one as "NaN", "Infinity", "-Infinity"
at any depth, returns the value itself (no copy) when there is none, and never changes the rest."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mock_tools.json_numbers import (
    NonFiniteNumber,
    finite_float,
    finite_json,
    first_non_finite,
    reject_constant,
)


@pytest.mark.parametrize("text", ['{"a": NaN}', "[Infinity]", "-Infinity", "1e999", "[-1e400]"])
def test_the_parse_hooks_refuse_what_json_cannot_hold(text: str) -> None:
    with pytest.raises(NonFiniteNumber):
        json.loads(text, parse_constant=reject_constant, parse_float=finite_float)


def test_finite_edges_parse() -> None:
    value = json.loads("[1.7976931348623157e308, 1e-999, -0.0]", parse_float=finite_float)
    assert value == [1.7976931348623157e308, 0.0, -0.0]


def test_first_non_finite_says_where() -> None:
    assert first_non_finite({"a": [1, {"b": float("-inf")}]}) == "a/1/b (-Infinity)"
    assert first_non_finite(float("nan")) == "(root) (NaN)"
    assert first_non_finite({"a": [1.5, "NaN"]}) is None


def test_finite_json_names_each_and_keeps_the_rest() -> None:
    value = {"x": [1, float("nan"), {"y": (float("inf"), "z")}], "w": -float("inf"), "v": 2.5}
    assert finite_json(value) == {
        "x": [1, "NaN", {"y": ["Infinity", "z"]}],
        "w": "-Infinity",
        "v": 2.5,
    }
    plain = {"a": [1, 2.5, None, True, "NaN"]}
    assert finite_json(plain) is plain


def test_finite_json_goes_any_depth() -> None:
    deep: list = []
    inner = deep
    for _ in range(50_000):
        inner.append([])
        inner = inner[0]
    inner.append(float("nan"))
    out = finite_json(deep)
    for _ in range(50_000):
        out = out[0]
    assert out == ["NaN"]


JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=20,
)


def _named(value):
    """The expected result, written the plain recursive way (values here are shallow)."""
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {k: _named(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_named(v) for v in value]
    return value


@given(JSONISH)
def test_finite_json_is_always_json_and_changes_only_non_finite_floats(value) -> None:
    out = finite_json(value)
    json.dumps(out, allow_nan=False)  # raises on any NaN or Infinity left
    assert out == _named(value)
    if first_non_finite(value) is None:
        assert out is value
