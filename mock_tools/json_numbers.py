"""Numbers JSON cannot hold: ``NaN``, ``Infinity``, ``-Infinity`` and literals too large for a
double (``1e999``).

JSON (RFC 8259) has no such numbers, yet Python's ``json`` reads and writes them. The project
draws one line:

- what a client *sends* (a call's body or arguments) must be JSON: ``reject_constant`` and
  ``finite_float`` make the standard library's parser refuse them (``NonFiniteNumber``), and
  ``first_non_finite`` finds one in a value some other parser already accepted (the MCP SDK's);
- what a tool *answers* (a live MCP server, an upstream API, a simulator) is kept, in one
  canonical form: ``finite_json`` replaces each such float by its name as a string, ``"NaN"``,
  ``"Infinity"`` or ``"-Infinity"``, before the answer is served or recorded, so the observation
  a live run saw and the one its replay sees are the same text.

Pure; imports nothing of the project.
"""

from __future__ import annotations

import math
from typing import Any

__all__ = [
    "NON_FINITE_NAMES",
    "NonFiniteNumber",
    "finite_float",
    "finite_json",
    "first_non_finite",
    "non_finite_name",
    "reject_constant",
]

NON_FINITE_NAMES = ("NaN", "Infinity", "-Infinity")
"""The names a non-finite float is kept as in an answer (what JavaScript and Python print)."""


class NonFiniteNumber(ValueError):
    """A number JSON cannot hold, met while parsing."""


def reject_constant(name: str) -> Any:
    """``json.loads(parse_constant=...)``: refuse ``NaN``, ``Infinity`` and ``-Infinity``."""
    raise NonFiniteNumber(f"{name} is not a JSON number")


def finite_float(text: str) -> float:
    """``json.loads(parse_float=...)``: the float of ``text``, refused when it overflows a double
    (``1e999`` would otherwise be read as infinity)."""
    value = float(text)
    if math.isinf(value):
        shown = text if len(text) <= 40 else text[:37] + "..."
        raise NonFiniteNumber(f"the number {shown} is too large for a double")
    return value


def non_finite_name(value: float) -> str:
    """``"NaN"``, ``"Infinity"`` or ``"-Infinity"`` for a non-finite float."""
    if math.isnan(value):
        return "NaN"
    return "Infinity" if value > 0 else "-Infinity"


def first_non_finite(value: Any) -> str | None:
    """Where the first non-finite float in a JSON-like value is (``a/0/b``, ``(root)``), or
    None when there is none. Iterative: any depth."""
    stack: list[tuple[Any, str]] = [(value, "")]
    while stack:
        item, path = stack.pop()
        if isinstance(item, float):
            if not math.isfinite(item):
                return f"{path.lstrip('/') or '(root)'} ({non_finite_name(item)})"
        elif isinstance(item, dict):
            stack.extend((v, f"{path}/{k}") for k, v in reversed(list(item.items())))
        elif isinstance(item, (list, tuple)):
            stack.extend((v, f"{path}/{i}") for i, v in reversed(list(enumerate(item))))
    return None


def finite_json(value: Any) -> Any:
    """``value`` with every non-finite float replaced by its name (``non_finite_name``); the
    value itself, unchanged and uncopied, when it holds none (the common case)."""
    if first_non_finite(value) is None:
        return value
    return _replaced(value)


def _replaced(value: Any) -> Any:
    """A copy of ``value`` with non-finite floats named, built without recursion (any depth)."""
    root: list[Any] = [None]
    stack: list[tuple[Any, Any, Any]] = [(value, root, 0)]  # (item, container, key in it)
    while stack:
        item, container, key = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            container[key] = non_finite_name(item)
        elif isinstance(item, dict):
            copy: dict[Any, Any] = dict.fromkeys(item)
            container[key] = copy
            stack.extend((v, copy, k) for k, v in item.items())
        elif isinstance(item, (list, tuple)):
            items: list[Any] = [None] * len(item)
            container[key] = items
            stack.extend((v, items, i) for i, v in enumerate(item))
        else:
            container[key] = item
    return root[0]
