"""Python expressions read without running code: what the benchmarks' ``eval`` calls give.

UltraTool (``evaluation/utils.py``) and ToolEyes (``Code/Evaluation/util/utils.py``) read model
output with Python's ``eval``: a reply "parses" when it evaluates without raising. Running a
model's text as code is not something a scorer may do, so ``evaluate`` computes the same value
for the expressions a reply holds in practice and refuses the rest:

- literals of every kind (strings, bytes, numbers, ``True``/``False``/``None``, ``...``), lists,
  tuples, sets, dicts (``**`` unpacking included), starred items;
- unary and binary operators, comparisons, ``and``/``or``/``not``, ``x if c else y``,
  subscripts and slices, f-strings, with Python's own semantics (a ``1/0`` raises, as ``eval``
  does);
- no names other than the constants, no calls, attributes, comprehensions or lambdas: those are
  ``Refused``. A reply that ``eval`` would have run differently is one that uses a name the
  benchmark module happens to define (``np``, ``json``...) or calls a function; the docs list this
  as a departure (docs/evaluation.md, "Reference step protocols").

Power, shift and repetition are refused past sizes that would hang the scorer (``2 ** 10 ** 9``).
Pure; imports nothing of the project.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

__all__ = ["Refused", "evaluate", "evaluates"]

MAX_EXPONENT = 10_000
MAX_SHIFT = 100_000
MAX_ITEMS = 1_000_000


class Refused(ValueError):
    """An expression ``evaluate`` will not compute (a name, a call, a huge power...)."""


_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.BitOr: operator.or_,
    ast.BitXor: operator.xor,
    ast.BitAnd: operator.and_,
    ast.MatMult: operator.matmul,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
    ast.Invert: operator.invert,
    ast.Not: operator.not_,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
    ast.In: lambda a, b: a in b,
    ast.NotIn: lambda a, b: a not in b,
}


def evaluate(text: str) -> Any:
    """The value ``eval(text)`` gives, computed without running code.

    Raises what ``eval`` would raise for a bad expression (``SyntaxError``, ``ZeroDivisionError``,
    ``TypeError``...) and ``Refused`` for an expression outside the module doc's subset."""
    tree = ast.parse(text.lstrip(" \t"), mode="eval")  # eval() strips leading spaces and tabs
    return _value(tree.body)


def evaluates(text: str) -> bool:
    """Whether ``eval(text)`` succeeds (as the module doc reads it: refused is a failure)."""
    try:
        evaluate(text)
    except Exception:  # noqa: BLE001 - every failure of eval counts as "does not evaluate"
        return False
    return True


def _value(node: ast.expr) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        items = _items(node.elts)
        return (
            list(items)
            if isinstance(node, ast.List)
            else (tuple(items) if isinstance(node, ast.Tuple) else set(items))
        )
    if isinstance(node, ast.Dict):
        return _dict(node)
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.BinOp):
        return _binary(node)
    if isinstance(node, ast.BoolOp):
        return _bool(node)
    if isinstance(node, ast.Compare):
        return _compare(node)
    if isinstance(node, ast.IfExp):
        return _value(node.body) if _value(node.test) else _value(node.orelse)
    if isinstance(node, ast.Subscript):
        return _value(node.value)[_index(node.slice)]
    if isinstance(node, ast.JoinedStr):
        return "".join(_fstring_part(v) for v in node.values)
    raise Refused(f"not evaluated: {type(node).__name__}")


def _items(elts: list[ast.expr]) -> list[Any]:
    out: list[Any] = []
    for e in elts:
        if isinstance(e, ast.Starred):
            out.extend(_value(e.value))
        else:
            out.append(_value(e))
        if len(out) > MAX_ITEMS:
            raise Refused("too many items")
    return out


def _dict(node: ast.Dict) -> dict[Any, Any]:
    out: dict[Any, Any] = {}
    for k, v in zip(node.keys, node.values, strict=True):
        if k is None:
            out.update(_value(v))
        else:
            key = _value(k)
            out[key] = _value(v)
    return out


def _binary(node: ast.BinOp) -> Any:
    left, right = _value(node.left), _value(node.right)
    op = type(node.op)
    huge = op is ast.Pow and isinstance(right, (int, float)) and abs(right) > MAX_EXPONENT
    if huge and not (isinstance(left, (int, float)) and abs(left) <= 1):
        raise Refused("power too large")
    if op in (ast.LShift, ast.RShift) and isinstance(right, int) and abs(right) > MAX_SHIFT:
        raise Refused("shift too large")
    if op is ast.Mult:
        _check_repeat(left, right)
        _check_repeat(right, left)
    return _BINARY[op](left, right)


def _check_repeat(seq: Any, count: Any) -> None:
    sized = isinstance(seq, (str, bytes, list, tuple)) and isinstance(count, int)
    if sized and len(seq) * count > MAX_ITEMS:
        raise Refused("repetition too large")


def _bool(node: ast.BoolOp) -> Any:
    value: Any = None
    for item in node.values:
        value = _value(item)
        if isinstance(node.op, ast.And) and not value:
            return value
        if isinstance(node.op, ast.Or) and value:
            return value
    return value


def _compare(node: ast.Compare) -> bool:
    left = _value(node.left)
    for op, item in zip(node.ops, node.comparators, strict=True):
        right = _value(item)
        if not _COMPARE[type(op)](left, right):
            return False
        left = right
    return True


def _index(node: ast.expr) -> Any:
    if isinstance(node, ast.Slice):
        return slice(
            _value(node.lower) if node.lower else None,
            _value(node.upper) if node.upper else None,
            _value(node.step) if node.step else None,
        )
    return _value(node)


def _fstring_part(node: ast.expr) -> str:
    if isinstance(node, ast.Constant):
        return str(node.value)
    if not isinstance(node, ast.FormattedValue):
        raise Refused("not evaluated: f-string part")
    value = _value(node.value)
    if node.conversion == ord("r"):
        value = repr(value)
    elif node.conversion == ord("s"):
        value = str(value)
    elif node.conversion == ord("a"):
        value = ascii(value)
    spec = _fstring_part_spec(node.format_spec)
    return format(value, spec)


def _fstring_part_spec(node: ast.expr | None) -> str:
    if node is None:
        return ""
    if isinstance(node, ast.JoinedStr):
        return "".join(_fstring_part(v) for v in node.values)
    raise Refused("not evaluated: format spec")
