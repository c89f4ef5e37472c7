"""One record of another benchmark's file at a time, each within limits: ``LeftOut`` and ``each``.

A prediction file is someone else's: a record the benchmark's own code would raise on, one that
would take that code's regular expressions or evaluator past any sensible time, or one whose
reply or plan is too large to score, must cost one record, not the command. ``each(items,
score, left_out)`` scores each item with ``score`` under ``record_time`` (``RECORD_SECONDS``:
on the main thread a timer interrupts Python code that runs longer, a catastrophic regular
expression included) and counts an item that raises, or runs over, in ``left_out`` with its
reason (``T-Eval's code raises: KeyError 'args'``, ``over the 10 s a record may take``).
``too_large`` is the check a scorer makes of a reply or plan before it reads it: a
``TooLarge``, which is a ``NoReferenceValue`` (a step metric reads it as "no value", as it reads
the reference code's own failures), left out here with its reason.

The limits, named as ``docs/reliability.md`` lists them: ``RECORD_SECONDS`` (10 s of scoring a
record), ``MAX_REPLY_CHARS`` (1,000,000 characters of a reply or gold text read), ``MAX_PLAN_STEPS``
(1,000 steps of a plan matched). Pure but for the timer; imports ``sandbox.eval.benchmarks``.
"""

from __future__ import annotations

import signal
import threading
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from sandbox.eval.benchmarks import NoReferenceValue

__all__ = [
    "MAX_PLAN_STEPS",
    "MAX_REPLY_CHARS",
    "RECORD_SECONDS",
    "LeftOut",
    "OverLimit",
    "TooLarge",
    "each",
    "record_time",
    "too_large",
]

T = TypeVar("T")
R = TypeVar("R")

RECORD_SECONDS = 10.0
"""How long scoring one record may take (the reference code's regular expressions, its plan
matching, the evaluator); a record that takes longer is left out."""
MAX_REPLY_CHARS = 1_000_000
"""The longest reply, template or gold text a scorer reads (characters); longer is left out."""
MAX_PLAN_STEPS = 1_000
"""The most steps of a plan T-Eval's plan matching compares (its similarity table is steps
squared); a longer plan is left out."""


class OverLimit(BaseException):
    """A record ran past its time. A ``BaseException``, so the reference code's own ``except
    Exception`` (which reads any failure as "unreadable") cannot swallow it."""


class TooLarge(NoReferenceValue):
    """A reply, template or plan over a size limit: not scored."""


class LeftOut:
    """How many records were left out, and why (reason -> count)."""

    def __init__(self) -> None:
        self.reasons: Counter[str] = Counter()

    def add(self, reason: str) -> None:
        self.reasons[reason] += 1

    def __len__(self) -> int:
        return sum(self.reasons.values())

    def as_dict(self) -> dict[str, int]:
        return dict(self.reasons)


def too_large(text: Any, what: str, limit: int = MAX_REPLY_CHARS) -> None:
    """``TooLarge`` when ``text`` (a reply, a template) is a string longer than ``limit``."""
    if isinstance(text, str) and len(text) > limit:
        raise TooLarge(f"{what} of {len(text)} characters, over the {limit} a record may hold")


@contextmanager
def record_time(seconds: float | None = None) -> Iterator[None]:
    """Interrupt the code inside (``OverLimit``) once it has run ``seconds`` (default
    ``RECORD_SECONDS``): a timer signal, so only on the main thread (elsewhere the code inside
    runs unbounded); the timer and handler that were there before are put back."""
    if seconds is None:
        seconds = RECORD_SECONDS
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise OverLimit(f"over the {seconds:g} s a record may take")

    previous = signal.signal(signal.SIGALRM, expired)
    before = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if before[0]:
            signal.setitimer(signal.ITIMER_REAL, *before)


def each(
    items: Iterable[T],
    score: Callable[[T], R],
    left_out: LeftOut,
    raises: str = "the reference code raises",
) -> list[R]:
    """``score`` of each item, in order, leaving out (and counting in ``left_out``, with the
    reason) an item on which it raises or runs over a limit."""
    kept: list[R] = []
    for item in items:
        try:
            with record_time():
                kept.append(score(item))
        except (OverLimit, TooLarge) as e:
            left_out.add(str(e))
        except RecursionError:
            left_out.add("nested deeper than it can be scored")
        except MemoryError:
            left_out.add("too large to score in memory")
        except Exception as e:  # noqa: BLE001 - where the benchmark's own code raises
            left_out.add(f"{raises}: {_text(e)}")
    return kept


def _text(e: BaseException) -> str:
    """``Type: message`` (first line, 80 characters), so equal failures count together."""
    first = (str(e).strip().splitlines() or [""])[0][:80]
    return f"{type(e).__name__}: {first}" if first else type(e).__name__
