"""What the benchmarks' ``eval`` of a reply gives, computed without running code: the same value
as Python's ``eval`` on every expression of the subset (checked against ``eval`` itself on these
hand-written, harmless texts), the same failure where ``eval`` fails, and a refusal for names
and calls."""

from __future__ import annotations

import pytest

from sandbox.eval.benchmarks.python_expr import Refused, evaluate, evaluates

SAME_AS_EVAL = [
    "{'city': 'Paris', 'days': 3}",
    '{"a": [1, 2.5, None, True, False]}',
    "  {'a': 1}",
    "\t[1, 2]",
    "('Paris',)",
    "{1, 2}",
    "...",
    "[...]",
    "-1",
    "+2.5",
    "~5",
    "not 0",
    "1 + 1",
    "'Pa' + 'ris'",
    "2 ** 10",
    "7 // 2",
    "7 % 3",
    "1 << 3",
    "'ab' * 3",
    "[0] * 4",
    "1 < 2 < 3",
    "1 if 0 else 2",
    "0 or 'x'",
    "1 and 0",
    "[1, 2, 3][1]",
    "'abcdef'[1:4:2]",
    "{**{'a': 1}, 'b': 2}",
    "[*[1, 2], 3]",
    "f'{1 + 1}x{3!r:>4}'",
    "b'bytes'",
    "1j",
    "'a' 'b'",
    "2 in [1, 2]",
    "None is None",
]


@pytest.mark.parametrize("text", SAME_AS_EVAL)
def test_the_subset_evaluates_as_python_does(text: str) -> None:
    assert evaluate(text) == eval(text)  # noqa: S307 - trusted literal test input


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("{'a': true}", Refused),  # eval: NameError
        ("null", Refused),
        ("len('ab')", Refused),  # eval: 2 (a call): the departure the docs list
        ("__import__('os')", Refused),
        ("(lambda: 1)()", Refused),
        ("[x for x in 'ab']", Refused),
        ("'a'.upper()", Refused),
        ("2 ** 10 ** 9", Refused),
        ("'a' * 10 ** 9", Refused),
        ("1 << 10 ** 9", Refused),
        ("1 / 0", ZeroDivisionError),
        ("{[1]: 2}", TypeError),
        ("{'a': 1", SyntaxError),
        ("", SyntaxError),
        ("Thought: x", SyntaxError),
    ],
)
def test_what_eval_would_not_give_fails(text: str, error: type[Exception]) -> None:
    with pytest.raises(error):
        evaluate(text)
    assert not evaluates(text)


def test_a_power_of_one_is_allowed_however_large() -> None:
    assert evaluate("1 ** 10 ** 9") == 1
