"""Canonical arguments: the only lookup key for a recorded call.

Two calls that mean the same thing get the same key whatever the key order, whitespace around
strings, or scalar spelling ("5" vs 5 for an integer parameter). The steps, in order:

1. drop null values;
2. fill defaults from the schema;
3. coerce scalars to the schema type ("5" -> 5, "true" -> true, 5 -> "5" for a string);
4. strip surrounding whitespace of strings (case is kept);
5. serialise as JSON with sorted keys and no whitespace.

Values that cannot be coerced are kept as given, so that schema validation can report them.
Nested objects (``properties``) and arrays (``items``) are canonicalised recursively. Under a
schema marked ``TOOLBENCH_NAMES`` (ToolBench and StableToolBench imports), an argument keyed by
another spelling of a property's ToolBench name (``ID`` for ``is_id``) is read as that property
first, so a call and a recording spelled either way meet. Under a schema marked
``RAW_ARGUMENTS`` (BFCL's API classes) the arguments are kept exactly as given (a deep copy):
the tool takes them as the caller wrote them.
Pure; imports ``mock_tools.names`` only.
"""

from __future__ import annotations

import copy
import json
import math
from collections.abc import Callable
from typing import Any

from mock_tools.names import RAW_ARGUMENTS, TOOLBENCH_NAMES, toolbench_arguments

_TRUE = {"true", "1", "yes", "y", "on"}
_FALSE = {"false", "0", "no", "n", "off"}


def canonical_args(args: dict[str, Any] | None, schema: dict[str, Any] | None = None) -> dict:
    """Return the canonical form of an arguments object under a JSON Schema."""
    schema = schema or {}  # no schema: an object without declared properties
    if schema.get(RAW_ARGUMENTS) is True:
        return copy.deepcopy(dict(args or {}))
    args = dict(args or {})
    if schema.get(TOOLBENCH_NAMES) is True:
        args = toolbench_arguments(args, _properties(schema))
    canonical: dict = _canon(args, schema)  # an object canonicalises to an object
    return canonical


def canonical_key(args: dict[str, Any] | None, schema: dict[str, Any] | None = None) -> str:
    """Canonical JSON text of the arguments: sorted keys, no whitespace."""
    return dumps_canonical(canonical_args(args, schema))


def dumps_canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _types(schema: dict[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, list):
        return [x for x in t if isinstance(x, str)]
    if isinstance(t, str):
        return [t]
    return []


def _properties(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema's ``properties``; none when they are not an object (a broken schema, which
    ``validate`` reports and the server serves unchecked: its calls are keyed as given)."""
    props = schema.get("properties")
    return props if isinstance(props, dict) else {}


def _canon(value: Any, schema: dict[str, Any]) -> Any:
    types = _types(schema)
    if isinstance(value, dict):
        props = _properties(schema)
        merged: dict[str, Any] = {}
        for key, sub in props.items():
            if isinstance(sub, dict) and sub.get("default") is not None:
                merged[key] = sub["default"]
        for key, item in value.items():
            if item is not None:
                merged[str(key)] = item
        return {
            k: _canon(v, props[k] if isinstance(props.get(k), dict) else {})
            for k, v in merged.items()
        }
    if isinstance(value, list):
        items = schema.get("items")
        sub = items if isinstance(items, dict) else {}
        return [_canon(v, sub) for v in value if v is not None]
    if isinstance(value, str):
        value = value.strip()
    candidates: list[str | None] = list(types) or [None]
    for t in candidates:
        coerced = _coerce(value, t)
        if coerced is not _FAIL:
            return coerced
    return _normalise_number(value)


_FAIL = object()


def _coerce(value: Any, t: str | None) -> Any:
    if t is None:
        return _normalise_number(value)
    if t == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, float)):
            return _number_text(value)
        return _FAIL
    if t == "integer":
        if isinstance(value, bool):
            return _FAIL
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                f = float(value)
            except ValueError:
                return _FAIL
            if math.isfinite(f) and f.is_integer():
                return int(f)
        return _FAIL
    if t == "number":
        if isinstance(value, bool):
            return _FAIL
        if isinstance(value, (int, float)):
            return _normalise_number(value)
        if isinstance(value, str):
            try:
                f = float(value)
            except ValueError:
                return _FAIL
            if math.isfinite(f):
                return _normalise_number(f)
        return _FAIL
    if t == "boolean":
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _TRUE | _FALSE:
            return value.lower() in _TRUE
        if isinstance(value, int) and value in (0, 1):
            return bool(value)
        return _FAIL
    if t in ("null", "array", "object"):
        # nulls are dropped and arrays and objects canonicalised by ``_canon`` before any value
        # reaches here: a scalar is none of these
        return _FAIL
    return _normalise_number(value)


def _normalise_number(value: Any) -> Any:
    """5.0 and 5 are one number; keep non-finite floats out of JSON."""
    if isinstance(value, float) and not isinstance(value, bool):
        if value.is_integer() and abs(value) < 2**53:
            return int(value)
        if not math.isfinite(value):
            return str(value)
    return value


def _number_text(value: int | float) -> str:
    value = _normalise_number(value)
    return str(value)


def canonicaliser(schema: dict[str, Any] | None) -> Callable[[dict[str, Any]], dict[str, Any]]:
    """``canonical_args`` under one schema, made once and applied to many arguments objects.

    Arguments whose values are all strings, integers, booleans or nulls that the schema does not
    ask to convert (a string for a ``string`` property, an integer for an ``integer`` or
    ``number`` one, any of them for a property without a type) take a short path with the same
    result; anything else goes through ``canonical_args``.
    """
    schema = schema or {}
    props = _properties(schema)
    subs = {k: sub if isinstance(sub, dict) else {} for k, sub in props.items()}
    defaults = {
        k: _canon(sub["default"], sub) for k, sub in subs.items() if sub.get("default") is not None
    }
    first: dict[str, str | None] = {k: next(iter(_types(sub)), None) for k, sub in subs.items()}
    as_given: dict[type, frozenset[str | None]] = {
        str: frozenset({None, "string"}),
        int: frozenset({None, "integer", "number"}),
        bool: frozenset({None, "boolean"}),
    }

    renames = schema.get(TOOLBENCH_NAMES) is True

    def canon(args: dict[str, Any]) -> dict[str, Any]:
        if renames:
            args = toolbench_arguments(args, props)
        out = dict(defaults)
        for k, v in args.items():
            if v is None:
                continue
            kinds = as_given.get(type(v))
            if kinds is None or first.get(k) not in kinds or type(k) is not str:
                return canonical_args(args, schema)
            out[k] = v.strip() if type(v) is str else v
        return out

    return canon
