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

Nothing it computes may grow past a size that would hang the scorer or fill its memory: an
integer past ``MAX_INT_BITS`` bits (``2 ** 10 ** 9``, ``(10 ** 10000) ** 10000``, a shift or a
product of huge numbers), a string, bytes or sequence past ``MAX_ITEMS`` characters or items
(repetition, concatenation), and text a ``%``-format or an f-string would make past
``MAX_ITEMS`` characters (a width or precision such as ``'%999999999d' % 1`` or
``f'{1:{10**9}}'``, or the text of a value that holds a huge one) are ``Refused`` before they
are made. Pure; imports nothing of the project.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable
from typing import Any

__all__ = ["Refused", "evaluate", "evaluates"]

MAX_EXPONENT = 10_000
MAX_SHIFT = 100_000
MAX_ITEMS = 1_000_000
"""The most characters, bytes or items a value (or the text a format makes) may hold."""
MAX_INT_BITS = 100_000
"""The most bits an integer may take (about 30,000 decimal digits)."""


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
    value = _value(tree.body)
    if _text_size(value) > MAX_ITEMS:  # what reads the value next walks all of it
        raise Refused("value too large")
    return value


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
    if op is ast.Pow and _is_int(left) and _is_int(right) and right > 0 and abs(left) > 1:
        _check_bits(left.bit_length() * right, "power")
    if op in (ast.LShift, ast.RShift) and isinstance(right, int) and abs(right) > MAX_SHIFT:
        raise Refused("shift too large")
    if op is ast.LShift and _is_int(left) and _is_int(right) and left:
        _check_bits(left.bit_length() + right, "shift")
    if op is ast.Mult:
        _check_repeat(left, right)
        _check_repeat(right, left)
        if _is_int(left) and _is_int(right):
            _check_bits(left.bit_length() + right.bit_length(), "product")
    sized = isinstance(left, _SIZED) and isinstance(right, _SIZED)
    if op is ast.Add and sized and len(left) + len(right) > MAX_ITEMS:
        raise Refused("concatenation too large")
    if op is ast.Mod and isinstance(left, (str, bytes)):
        _check_percent_format(left, right)
    return _BINARY[op](left, right)


_SIZED = (str, bytes, list, tuple)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _check_bits(bits: int, what: str) -> None:
    if bits > MAX_INT_BITS:
        raise Refused(f"{what} too large (about {bits} bits)")


def _check_repeat(seq: Any, count: Any) -> None:
    """A repetition whose result would hold more than ``MAX_ITEMS`` characters or items, the
    items of items counted (``[[1] * 10**6] * 10**6`` holds 10**12)."""
    if not (isinstance(seq, _SIZED) and _is_int(count)) or count <= 0:
        return
    each = len(seq) if isinstance(seq, (str, bytes)) else _text_size(seq)
    if each * count > MAX_ITEMS:
        raise Refused("repetition too large")


_PERCENT = re.compile(
    rb"%(?:\([^)]*\))?[#0\- +]*(\*|\d+)?(?:\.(\*|\d+))?[hlL]?([diouxXeEfFgGcrsab%])"
)


def _check_percent_format(fmt: str | bytes, args: Any) -> None:
    """``Refused`` when ``fmt % args`` would make more than ``MAX_ITEMS`` characters: the
    format's own widths and precisions (``*`` ones taken from ``args``) and the text of the
    values it formats, added up."""
    values = (
        list(args.values())
        if isinstance(args, dict)
        else (list(args) if isinstance(args, tuple) else [args])
    )
    raw = fmt.encode("utf-8", "surrogatepass") if isinstance(fmt, str) else fmt
    size = len(raw)
    for width, precision, _ in _PERCENT.findall(raw):
        for part in (width, precision):
            if part == b"*":
                star = values.pop(0) if values else 0
                size += abs(star) if _is_int(star) else 0
            elif part:
                size += int(part) if len(part) < 10 else MAX_ITEMS + 1
        if size > MAX_ITEMS:
            raise Refused("%-format too large")
    size += sum(_text_size(v) for v in values)
    if size > MAX_ITEMS:
        raise Refused("%-format too large")


_SPEC_NUMBERS = re.compile(r"(\d+)")


def _check_format_spec(spec: str) -> None:
    """``Refused`` for a format spec whose width or precision is over ``MAX_ITEMS``."""
    for number in _SPEC_NUMBERS.findall(spec):
        if len(number) > 7 or int(number) > MAX_ITEMS:
            raise Refused("format width too large")


def _text_size(value: Any, budget: int = MAX_ITEMS) -> int:
    """About how many characters ``str`` or ``repr`` of ``value`` takes (at least that many),
    counted without building it; once past ``budget`` the count stops there."""
    size = 0
    stack = [value]
    while stack and size <= budget:
        item = stack.pop()
        if isinstance(item, (str, bytes)):
            size += len(item) + 3
        elif _is_int(item):
            size += item.bit_length() // 4 + 1
        elif isinstance(item, dict):
            size += 2 + 4 * len(item)
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, (list, tuple, set, frozenset)):
            size += 2 + 2 * len(item)
            stack.extend(item)
        else:
            size += 32
    return size


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
    if _text_size(value) > MAX_ITEMS:
        raise Refused("f-string value too large")
    if node.conversion == ord("r"):
        value = repr(value)
    elif node.conversion == ord("s"):
        value = str(value)
    elif node.conversion == ord("a"):
        value = ascii(value)
    spec = _fstring_part_spec(node.format_spec)
    _check_format_spec(spec)
    return format(value, spec)


def _fstring_part_spec(node: ast.expr | None) -> str:
    if node is None:
        return ""
    if isinstance(node, ast.JoinedStr):
        return "".join(_fstring_part(v) for v in node.values)
    raise Refused("not evaluated: format spec")
