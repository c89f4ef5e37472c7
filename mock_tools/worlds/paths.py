"""Paths into a world's state, the assertions over them, and the diff of two states.

A path is ``collection.id.field.subfield...``: segments separated by dots; a segment holding a
dot (or starting with a quote) is written in double quotes (``orders."A.1".status``); a number
indexes a list; ``*`` in a path matches every key (every record in the id place). The value at a
path that does not exist is *missing* (``exists: false`` holds, every other comparison fails).

Comparisons (``StateAssertion``): ``equals`` / ``not_equals`` (JSON equality: 1 equals 1.0, true
is not 1), ``one_of`` (a list of values), ``contains`` (a substring of a string, an element of a
list, a key of an object), ``exists``, ``gt`` / ``ge`` / ``lt`` / ``le`` (numbers only), and
``count`` (how many records match ``where``, or how many keys a ``*`` matched).

``diff_states(initial, final, gold)`` compares at the level of leaf paths (a record flattened to
its fields) and sorts every differing path into what the agent changed that the gold did not
(``collateral``), what the gold changed that the agent did not (``missed``), and what both
changed, differently (``wrong``). Pure; imports the state and task models.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from mock_tools.worlds.state import BOOKKEEPING, State, json_equal
from mock_tools.worlds.task import StateAssertion

__all__ = [
    "MISSING",
    "StateDiff",
    "check_assertion",
    "diff_states",
    "flatten",
    "parse_path",
    "resolve",
]


class _Missing:
    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


class PathError(ValueError):
    """A path that cannot be read."""


def parse_path(path: str) -> list[str]:
    """The segments of a path (see the module docstring)."""
    out: list[str] = []
    i, n = 0, len(path)
    while i < n:
        if path[i] == '"':
            end = path.find('"', i + 1)
            if end < 0:
                raise PathError(f"unclosed quote in path {path!r}")
            out.append(path[i + 1 : end])
            i = end + 1
            if i < n and path[i] != ".":
                raise PathError(f"a quoted segment must end at a dot in path {path!r}")
            i += 1
            continue
        end = path.find(".", i)
        end = n if end < 0 else end
        segment = path[i:end]
        if not segment:
            raise PathError(f"empty segment in path {path!r}")
        out.append(segment)
        i = end + 1
    if not out or path.endswith("."):
        raise PathError(f"empty segment in path {path!r}")
    return out


def _step(value: Any, segment: str) -> Any:
    if isinstance(value, dict):
        return value.get(segment, MISSING)
    if isinstance(value, list) and segment.lstrip("-").isdigit():
        i = int(segment)
        return value[i] if -len(value) <= i < len(value) else MISSING
    return MISSING


def resolve(state: State, path: str) -> list[tuple[str, Any]]:
    """Every ``(concrete path, value)`` a path reaches (several with ``*``); a path that reaches
    nothing gives one ``MISSING``."""
    segments = parse_path(path)
    collection, rest = segments[0], segments[1:]
    if not rest:
        ids = state.ids(collection)
        return [(collection, {rid: state.raw(collection, rid) for rid in ids})]
    ids = state.ids(collection) if rest[0] == "*" else [rest[0]]
    found: list[tuple[str, Any]] = []
    for rid in ids:
        record = state.raw(collection, rid)
        for where, value in _walk(record if record is not None else MISSING, rest[1:]):
            found.append((".".join([collection, rid, *where]), value))
    return found or [(path, MISSING)]


def _walk(value: Any, segments: list[str]) -> Iterator[tuple[list[str], Any]]:
    if not segments:
        yield [], value
        return
    head, tail = segments[0], segments[1:]
    if head == "*":
        keys: list[str] = []
        if isinstance(value, dict):
            keys = sorted(value)
        elif isinstance(value, list):
            keys = [str(i) for i in range(len(value))]
        for key in keys:
            for where, v in _walk(_step(value, key), tail):
                yield [key, *where], v
        return
    for where, v in _walk(_step(value, head) if value is not MISSING else MISSING, tail):
        yield [head, *where], v


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def compare(value: Any, comparison: str, expected: Any) -> bool:
    """Whether ``value`` passes one comparison (``count`` is the caller's)."""
    if comparison == "exists":
        return (value is not MISSING) is bool(expected)
    if value is MISSING:
        return False
    if comparison == "equals":
        return json_equal(value, expected)
    if comparison == "not_equals":
        return not json_equal(value, expected)
    if comparison == "one_of":
        return any(json_equal(value, e) for e in expected)
    if comparison == "contains":
        if isinstance(value, str):
            return isinstance(expected, str) and expected in value
        if isinstance(value, list):
            return any(json_equal(item, expected) for item in value)
        if isinstance(value, dict):
            return isinstance(expected, str) and expected in value
        return False
    if not (_number(value) and _number(expected)):
        return False
    if comparison == "gt":
        return bool(value > expected)
    if comparison == "ge":
        return bool(value >= expected)
    if comparison == "lt":
        return bool(value < expected)
    if comparison == "le":
        return bool(value <= expected)
    raise ValueError(f"unknown comparison {comparison!r}")


@dataclass(frozen=True)
class AssertionResult:
    passed: bool
    detail: str
    """What was found (a value, a count), for the report."""


def check_assertion(state: State, a: StateAssertion) -> AssertionResult:
    """Whether ``state`` satisfies ``a``, and what was found."""
    comparison, expected = a.comparison, a.expected
    if a.where is not None:
        matches = _where(state, a.path, a.where)
        if comparison == "count":
            return AssertionResult(len(matches) == expected, f"{len(matches)} records match")
        values = [(rid, _leaf(rec, a.field)) for rid, rec in matches]
        if not values:
            return AssertionResult(False, "no record matches")
        bad = [(rid, v) for rid, v in values if not compare(v, comparison, expected)]
        if bad:
            return AssertionResult(False, f"{bad[0][0]}: {_shown(bad[0][1])}")
        return AssertionResult(True, f"{len(values)} records")
    found = resolve(state, a.path)
    if comparison == "count":
        present = [v for _, v in found if v is not MISSING]
        return AssertionResult(len(present) == expected, f"{len(present)} found")
    bad = [(p, v) for p, v in found if not compare(v, comparison, expected)]
    if bad:
        return AssertionResult(False, f"{bad[0][0]} is {_shown(bad[0][1])}")
    shown = _shown(found[0][1]) if len(found) == 1 else f"{len(found)} values"
    return AssertionResult(True, shown)


def _leaf(record: Any, field_path: str | None) -> Any:
    if field_path is None:
        return record
    value = record
    for segment in parse_path(field_path):
        value = _step(value, segment)
    return value


def _where(state: State, path: str, where: dict[str, Any]) -> list[tuple[str, Any]]:
    segments = parse_path(path)
    if len(segments) != 1:
        raise PathError(f"'where' selects records of a collection: {path!r} is not one")
    collection = segments[0]
    out = []
    for rid in state.ids(collection):
        record = state.raw(collection, rid)
        if isinstance(record, dict) and all(
            json_equal(_leaf(record, k) if "." in k else record.get(k, MISSING), v)
            for k, v in where.items()
        ):
            out.append((rid, record))
    return out


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 120 else text[:117] + "..."


# -- diffs ----------------------------------------------------------------------------------


def flatten(value: Any, prefix: str) -> dict[str, Any]:
    """Leaf paths of a JSON value (an empty object or list is a leaf of its own)."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{_segment(k)}"))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}.{i}"))
        return out
    return {prefix: value}


def _segment(key: str) -> str:
    return f'"{key}"' if ("." in key or key.startswith('"') or not key) else key


@dataclass
class StateDiff:
    """Leaf paths that differ between the final and the gold state, sorted by who changed
    them (each entry: path, initial value, final value, gold value)."""

    collateral: list[dict[str, Any]] = field(default_factory=list)
    missed: list[dict[str, Any]] = field(default_factory=list)
    wrong: list[dict[str, Any]] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.collateral or self.missed or self.wrong)

    def to_json(self) -> dict[str, Any]:
        return {"collateral": self.collateral, "missed": self.missed, "wrong": self.wrong}

    def summary(self) -> str:
        parts = []
        for name in ("collateral", "missed", "wrong"):
            entries = getattr(self, name)
            if entries:
                paths = ", ".join(e["path"] for e in entries[:3])
                more = f" (+{len(entries) - 3})" if len(entries) > 3 else ""
                parts.append(f"{name}: {paths}{more}")
        return "; ".join(parts) or "no difference"


def _records(state: State, collection: str, rid: str) -> dict[str, Any]:
    record = state.raw(collection, rid)
    return {} if record is None else flatten(record, f"{collection}.{_segment(rid)}")


def diff_states(
    initial: State, final: State, gold: State, ignore: list[str] | None = None
) -> StateDiff:
    """Where ``final`` differs from ``gold`` (bookkeeping collections and ``ignore`` left out),
    with the initial value beside each path (see the module docstring)."""
    out = StateDiff()
    patterns = list(ignore or [])
    for collection in sorted({*final.collections(), *gold.collections()}):
        if collection.startswith(BOOKKEEPING):
            continue
        ids = sorted({*final.ids(collection), *gold.ids(collection)})
        for rid in ids:
            f_rec, g_rec = final.raw(collection, rid), gold.raw(collection, rid)
            if f_rec is g_rec:  # shared by both states: untouched since a common ancestor
                continue
            f, g = _records(final, collection, rid), _records(gold, collection, rid)
            i = _records(initial, collection, rid)
            for path in sorted({*f, *g}):
                fv, gv = f.get(path, MISSING), g.get(path, MISSING)
                if fv == gv and type(fv) is type(gv):
                    continue
                if any(fnmatch.fnmatchcase(path, p) for p in patterns):
                    continue
                iv = i.get(path, MISSING)
                entry = {"path": path, "initial": _json(iv), "final": _json(fv), "gold": _json(gv)}
                if gv == iv and type(gv) is type(iv):
                    out.collateral.append(entry)
                elif fv == iv and type(fv) is type(iv):
                    out.missed.append(entry)
                else:
                    out.wrong.append(entry)
    return out


def _json(value: Any) -> Any:
    return "<absent>" if value is MISSING else value
