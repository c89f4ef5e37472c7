"""Deterministic answer checks (the ``Check`` kinds of ``mock_tools.models``), as pure functions.

Matching rules:

- ``contains`` / ``not_contains`` / ``any_of``: substring test; case-insensitive (``casefold``)
  unless the check sets ``case``; runs of whitespace count as one space on both sides.
- ``regex``: ``re.search`` anywhere in the answer; ``re.IGNORECASE`` unless ``case``.
- ``number``: some number written in the answer is within ``tolerance`` (absolute) of ``value``.
  Numbers are found with :func:`find_numbers`: thousands separators (``1,234,567``), decimals,
  signs (``-3``, ``−3``), exponents (``1.5e3``); digits glued to letters (``A320``) and the parts of
  dates (``2023-05-01`` gives 2023, 5, 1, never -5) are handled as a reader would.
"""

from __future__ import annotations

import math
import re

from pydantic import BaseModel

from mock_tools.models import Check

_NUMBER = re.compile(
    r"""
    (?<![\w.])                       # not glued to a word or another number; a hyphen after a
                                      # digit or letter (2023-05, B-52) is therefore never a sign
    (?P<sign>[-+\u2212])?            # ASCII or unicode minus
    (?:
        (?P<int>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?P<frac>\.\d+)?
      | (?P<bare>\.\d+)             # .5
    )
    (?P<exp>[eE][-+]?\d+)?
    """,
    re.VERBOSE,
)


class CheckResult(BaseModel):
    """The outcome of one check on one answer."""

    index: int
    kind: str
    passed: bool
    detail: str = ""


def find_numbers(text: str) -> list[float]:
    """Every number written in ``text``, in order of appearance."""
    found: list[float] = []
    for m in _NUMBER.finditer(text):
        int_part = (m.group("int") or "0").replace(",", "")
        literal = int_part + (m.group("frac") or m.group("bare") or "") + (m.group("exp") or "")
        value = float(literal)
        if m.group("sign") in ("-", "\u2212"):
            value = -value
        if math.isfinite(value):
            found.append(value)
    return found


def _norm(text: str, case: bool) -> str:
    text = " ".join(text.split())
    return text if case else text.casefold()


class _Answer:
    """An answer with its whitespace-normalised forms, made once for all of its checks."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._forms: dict[bool, str] = {}

    def has(self, needle: str, case: bool) -> bool:
        if case not in self._forms:
            self._forms[case] = _norm(self.text, case)
        return _norm(needle, case) in self._forms[case]


def run_check(answer: str, check: Check, index: int = 0) -> CheckResult:
    """Run one check against an answer."""
    return _run_check(_Answer(answer), check, index)


def _run_check(normalised: _Answer, check: Check, index: int) -> CheckResult:
    answer = normalised.text
    kind = check.kind
    if kind == "contains":
        ok = normalised.has(str(check.value), check.case)
        detail = f"{'found' if ok else 'missing'}: {check.value!r}"
    elif kind == "not_contains":
        ok = not normalised.has(str(check.value), check.case)
        detail = f"{'absent' if ok else 'present'}: {check.value!r}"
    elif kind == "any_of":
        values = check.values or []
        hits = [v for v in values if normalised.has(v, check.case)]
        ok = bool(hits)
        detail = f"found {hits[0]!r}" if hits else f"none of {values!r}"
    elif kind == "regex":
        flags = 0 if check.case else re.IGNORECASE
        m = re.search(check.pattern or "", answer, flags)
        ok = m is not None
        detail = f"matched {m.group(0)!r}" if m else f"no match for /{check.pattern}/"
    elif kind == "number":
        target = float(check.value)  # type: ignore[arg-type]
        tol = abs(check.tolerance) + 1e-9 * max(1.0, abs(target))
        numbers = find_numbers(answer)
        close = [n for n in numbers if abs(n - target) <= tol]
        ok = bool(close)
        if ok:
            detail = f"found {close[0]:g} (want {target:g} ± {check.tolerance:g})"
        else:
            shown = ", ".join(f"{n:g}" for n in numbers[:8]) or "no numbers"
            detail = f"want {target:g} ± {check.tolerance:g}; saw {shown}"
    else:  # pragma: no cover - Check validates kind
        raise ValueError(f"unknown check kind {kind!r}")
    return CheckResult(index=index, kind=kind, passed=ok, detail=detail)


def run_checks(answer: str, checks: list[Check]) -> list[CheckResult]:
    """Run every check against an answer, in order."""
    normalised = _Answer(answer)
    return [_run_check(normalised, c, i) for i, c in enumerate(checks)]


def all_pass(results: list[CheckResult]) -> bool:
    """True when every check passed (vacuously true for no checks)."""
    return all(r.passed for r in results)
