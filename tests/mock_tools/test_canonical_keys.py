"""Canonical keys, value by value: what each schema type makes of each spelling of a value.

A recording is found by its canonical key only; two spellings that mean one value must meet, and
a value the schema cannot read must stay as given (so validation reports it, and it never meets a
recording of another value). The expectations follow the rules in ``mock_tools/canonical.py``'s
docstring and JSON Schema's types, written out by hand.
"""

from __future__ import annotations

from typing import Any

import pytest

from mock_tools.canonical import canonical_args, canonical_key, canonicaliser
from mock_tools.names import TOOLBENCH_NAMES
from tests.mock_tools.test_canonical import SCHEMA as _WEATHER

WEATHER_SCHEMA: dict[str, Any] = _WEATHER


def _one(schema: dict[str, Any], value: Any) -> Any:
    """The canonical form of ``value`` as the property ``v`` of an object under ``schema``."""
    got = canonical_args({"v": value}, {"type": "object", "properties": {"v": schema}})
    return got.get("v", "<dropped>")


@pytest.mark.parametrize(
    ("schema", "given", "canonical"),
    [
        # a string parameter reads numbers and booleans as their JSON text
        ({"type": "string"}, 5, "5"),
        ({"type": "string"}, 2.0, "2"),
        ({"type": "string"}, 2.5, "2.5"),
        ({"type": "string"}, True, "true"),
        ({"type": "string"}, False, "false"),
        ({"type": "string"}, "  Oslo ", "Oslo"),
        # an integer parameter reads integral text and floats, nothing else
        ({"type": "integer"}, "1.5", "1.5"),
        ({"type": "integer"}, "7.0", 7),
        ({"type": "integer"}, "inf", "inf"),
        ({"type": "integer"}, True, True),
        # a boolean parameter reads the words and 0 / 1, other integers stay as given
        ({"type": "boolean"}, 0, False),
        ({"type": "boolean"}, 1, True),
        ({"type": "boolean"}, 2, 2),
        ({"type": "boolean"}, 5, 5),
        ({"type": "boolean"}, "Off", False),
        # a number keeps its fraction, an integral float below 2**53 is an integer
        ({"type": "number"}, 1.5, 1.5),
        ({"type": "number"}, "3.0", 3),
        ({"type": "number"}, float("inf"), "inf"),
        ({}, float("-inf"), "-inf"),
        ({}, float("nan"), "nan"),
        # a type the canonicaliser does not know keeps the value (stripped, numbers normalised)
        ({"type": "date"}, " 2024-01-01 ", "2024-01-01"),
        ({"type": "date"}, 4.0, 4),
    ],
)
def test_each_type_reads_each_spelling_of_a_value(
    schema: dict[str, Any], given: Any, canonical: Any
) -> None:
    got = _one(schema, given)
    assert (type(got), got) == (type(canonical), canonical)


@pytest.mark.parametrize("other", ["null", "array", "object"])
def test_a_union_type_tries_each_member_in_turn(other: str) -> None:
    """``["null", "integer"]`` (and an array or object beside a scalar) reads ``"5"`` as the
    integer 5: a scalar is never a null, an array or an object, so the next member reads it."""
    assert _one({"type": [other, "integer"]}, "5") == 5
    assert _one({"type": [other, "integer"]}, "five") == "five"


def test_integral_floats_become_integers_only_where_floats_are_exact() -> None:
    """Below 2**53 every integer is exactly a float, so ``5.0`` and ``5`` are one number; from
    2**53 on, a float may stand for several integers and keeps its float spelling."""
    below, at = float(2**53 - 1), float(2**53)
    assert canonical_key({"v": below}) == f'{{"v":{2**53 - 1}}}'
    assert canonical_key({"v": at}) == '{"v":9007199254740992.0}'
    assert canonical_key({"v": 200.0}) == '{"v":200}'
    assert canonical_key({"v": -(2.0**60)}) == '{"v":-1.152921504606847e+18}'


def test_arrays_are_read_item_by_item_under_their_items_schema() -> None:
    """Each item is coerced under ``items``; null items are dropped, the others keep their
    order; an array without ``items`` keeps its items (stripped)."""
    schema = {"type": "array", "items": {"type": "integer"}}
    assert _one(schema, ["1", None, " 2 ", 3.0, None]) == [1, 2, 3]
    assert _one({"type": "array"}, [" a ", None, "1"]) == ["a", "1"]
    nested = {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "number"}}}}
    assert _one(nested, [{"n": "2.50"}, {"n": None}]) == [{"n": 2.5}, {}]


def test_keys_keep_non_ascii_text_as_it_is() -> None:
    """The key is UTF-8 JSON text: ``Zürich`` is written as itself, not as ``\\u00fc``."""
    key = canonical_key({"city": "Zürich", "note": "日本"})
    assert key == '{"city":"Zürich","note":"日本"}'


def test_no_schema_means_an_object_without_declared_properties() -> None:
    """Without a schema (or with an empty one) values are only stripped and normalised."""
    args = {"b": " x ", "a": 2.0, "c": None}
    assert canonical_args(args) == canonical_args(args, {}) == {"a": 2, "b": "x"}
    assert canonicaliser(None)(args) == canonicaliser({})(args) == {"a": 2, "b": "x"}


SCHEMA: dict[str, Any] = {
    **WEATHER_SCHEMA,  # city (string), days (integer, default 3), metric (boolean), ratio (number)
    "properties": {
        **WEATHER_SCHEMA["properties"],
        "free": True,  # JSON Schema: a boolean schema accepts anything
        "tags": {"type": "array", "items": {"type": "string"}},
    },
}

ARGUMENTS: list[dict[Any, Any]] = [
    {},
    {"city": " Oslo "},
    {"city": "Oslo", "days": "5", "metric": "yes", "ratio": "0.50"},
    {"city": 7, "days": 4, "metric": 1, "ratio": 2},
    {"free": " any ", "days": None},
    {"free": 3.0, "tags": [" a ", 1, None]},
    {"other": "kept", "days": 2.0},
    {1: "a non-string key"},
    {"metric": True, "city": True},
]


@pytest.mark.parametrize("args", ARGUMENTS)
def test_the_prepared_canonicaliser_gives_canonical_args(args: dict[Any, Any]) -> None:
    """``canonicaliser(schema)`` (made once per API when a suite is indexed) and
    ``canonical_args`` agree on every argument object, whatever path it takes."""
    assert canonicaliser(SCHEMA)(dict(args)) == canonical_args(dict(args), SCHEMA)


def test_a_non_string_key_is_read_as_its_text() -> None:
    args: dict[Any, Any] = {1: "a"}
    assert canonicaliser(SCHEMA)(args) == {"1": "a", "days": 3}


def test_toolbench_spellings_of_a_name_meet_only_under_a_toolbench_schema() -> None:
    """Under a schema marked as a ToolBench import, ``ID`` is another spelling of ``is_id``; under
    any other schema it is an argument of its own."""
    props = {"is_id": {"type": "integer"}}
    toolbench = {"type": "object", "properties": props, TOOLBENCH_NAMES: True}
    plain = {"type": "object", "properties": props}
    for canon in (canonicaliser(toolbench), lambda a: canonical_args(a, toolbench)):
        assert canon({"ID": 5}) == canon({"is_id": "5"}) == {"is_id": 5}
    for canon in (canonicaliser(plain), lambda a: canonical_args(a, plain)):
        assert canon({"ID": 5}) == {"ID": 5}
    marked_otherwise = {"type": "object", "properties": props, TOOLBENCH_NAMES: "yes"}
    assert canonicaliser(marked_otherwise)({"ID": 5}) == {"ID": 5}


@pytest.mark.parametrize(
    "args",
    [
        {"city": " Oslo "},  # a string for a string property
        {"days": 5, "ratio": 2},  # integers for integer and number properties
        {"metric": False},  # a boolean for a boolean property
        {"free": "x", "other": 3, "more": True},  # anything for a property without a type
        {"city": None, "days": 7},
    ],
)
def test_plain_recorded_arguments_take_the_short_path(
    args: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indexing a large suite canonicalises every recording (``bench/store_bench.py`` measures
    it): arguments that need no conversion are canonicalised without the general, per-value
    ``canonical_args``, as ``canonicaliser``'s docstring promises."""
    import mock_tools.canonical as canonical_module

    calls: list[dict[str, Any]] = []

    def general(args: dict[str, Any], schema: dict[str, Any] | None = None) -> dict[str, Any]:
        calls.append(args)
        return canonical_args(args, schema)

    canon = canonicaliser(SCHEMA)
    expected = canonical_args(dict(args), SCHEMA)
    monkeypatch.setattr(canonical_module, "canonical_args", general)
    assert canon(dict(args)) == expected
    assert calls == []
    assert canon({"days": "5"}) == {"days": 5}  # a conversion takes the general path
    assert calls == [{"days": "5"}]
