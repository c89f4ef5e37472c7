"""BFCL's API instances as JSON records, and a call's result as BFCL's executor writes it.

A BFCL API class (``GorillaFileSystem``, ``TradingBot``...) keeps its state in plain Python
attributes. BFCL's checker compares two instances attribute by attribute with ``==``, leaving
out the private ones (names starting with ``_``). ``instance_records`` makes one JSON record per
attribute, so that two instances BFCL finds equal get equal records and two it finds different
get different ones:

- ``str``, ``bool``, ``int``, ``None`` as themselves; a ``float`` that is a whole number as that
  integer (Python's ``1 == 1.0``), NaN and the infinities as ``{"$float": "nan"}``...;
- a ``dict`` with string keys as a JSON object (key order does not matter, as for ``==``); one
  with another key as ``{"$dict": [[key, value], ...]}`` sorted by the key's JSON text;
- a ``list`` as a list, a ``tuple`` as ``{"$tuple": [...]}`` (``(1,) != [1]`` in Python), a
  ``set`` as ``{"$set": [...]}`` sorted;
- any other object (a ``Directory``, a ``File``) as ``{"$class": name, ...}`` with its public
  attributes; one already written elsewhere in the same instance (a parent directory, the current
  directory) as ``{"$ref": path}`` to where it was first written, so cycles end;
- a ``random.Random`` as a digest of its state, a ``datetime`` as its ISO text.

Public attributes are compared; private ones are the instance's bookkeeping: they go to a
collection of their own (``_<Class>``), so two states that differ only there (the file system's
current directory, a generator's position) have different hashes (a session restores the right
one) and equal data hashes (BFCL's state check ignores them). Private attributes of nested
objects are left out (a ``File``'s last-modified time is the wall clock). An attribute that is
``None`` has no record. Pure; imports nothing of the project.
"""

from __future__ import annotations

import datetime
import hashlib
import json
import math
import random
from typing import Any

__all__ = ["PRIVATE", "bfcl_result_text", "encode_value", "instance_records"]

PRIVATE = "_"
"""Prefix of the collection holding an instance's private attributes."""


def instance_records(instance: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """The public and the private attributes of an API instance as JSON records (see the module
    docstring); attributes that are ``None`` are left out."""
    seen: dict[int, str] = {id(instance): ""}
    public: dict[str, Any] = {}
    private: dict[str, Any] = {}
    names = sorted(vars(instance))
    for name in [n for n in names if not n.startswith("_")] + [
        n for n in names if n.startswith("_")
    ]:
        value = getattr(instance, name)
        if value is None:
            continue
        encoded = encode_value(value, name, seen)
        (private if name.startswith("_") else public)[name] = encoded
    return public, private


def encode_value(value: Any, path: str, seen: dict[int, str]) -> Any:
    """One value as JSON (see the module docstring); ``seen`` maps the objects already written
    to their paths."""
    if value is None or isinstance(value, (str, bool)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return {"$float": repr(value)}
        return int(value) if value.is_integer() and abs(value) < 2**63 else value
    if isinstance(value, random.Random):
        digest = hashlib.sha256(repr(value.getstate()).encode()).hexdigest()[:16]
        return {"$random": digest}
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return {"$time": value.isoformat()}
    if isinstance(value, datetime.timedelta):
        return {"$timedelta": value.total_seconds()}
    key = id(value)
    if key in seen and not isinstance(value, (str, int, float)):
        return {"$ref": seen[key]}
    seen[key] = path
    if isinstance(value, dict):
        if all(isinstance(k, str) for k in value):
            return {k: encode_value(v, f"{path}.{k}", seen) for k, v in value.items()}
        pairs = [
            [encode_value(k, path, {}), encode_value(v, f"{path}.{k}", seen)]
            for k, v in value.items()
        ]
        return {"$dict": sorted(pairs, key=lambda p: json.dumps(p[0], sort_keys=True))}
    if isinstance(value, list):
        return [encode_value(v, f"{path}.{i}", seen) for i, v in enumerate(value)]
    if isinstance(value, tuple):
        return {"$tuple": [encode_value(v, f"{path}.{i}", seen) for i, v in enumerate(value)]}
    if isinstance(value, (set, frozenset)):
        items = [encode_value(v, path, {}) for v in value]
        return {"$set": sorted(items, key=lambda v: json.dumps(v, sort_keys=True))}
    attrs = getattr(value, "__dict__", None)
    if isinstance(attrs, dict):
        out: dict[str, Any] = {"$class": type(value).__name__}
        for name in sorted(attrs):
            if not name.startswith("_"):
                out[name] = encode_value(attrs[name], f"{path}.{name}", seen)
        return out
    return {"$repr": repr(value)}


def bfcl_result_text(result: Any) -> str:
    """A call's result as BFCL's executor turns it into text: a string as it is, a ``dict`` as
    ``json.dumps`` writes it (``str`` when it cannot), anything else as ``str``."""
    if type(result) is str:
        return result
    if type(result) is dict:
        try:
            return json.dumps(result)
        except Exception:  # BFCL's executor falls back to str() on any failure
            return str(result)
    return str(result)
