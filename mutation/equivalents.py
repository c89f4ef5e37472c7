"""Equivalent mutants: changes that no test can detect because behaviour does not change.

Each is named by its module, the function it mutates and the exact lines it changes (stripped of
indentation), so an entry goes stale, and the mutant counts as a survivor again, as soon as the
code it describes changes. ``why`` says why the behaviour is the same; ``docs/testing.md`` lists
every entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["EQUIVALENTS", "Equivalent", "matching"]


@dataclass(frozen=True)
class Equivalent:
    module: str
    function: str
    before: tuple[str, ...]
    after: tuple[str, ...]
    why: str


EQUIVALENTS: tuple[Equivalent, ...] = ()


def matching(
    module: str,
    function: str,
    removed: Sequence[str],
    added: Sequence[str],
    equivalents: Sequence[Equivalent] = EQUIVALENTS,
) -> Equivalent | None:
    """The entry describing this change, if one does."""
    for e in equivalents:
        if (e.module, e.function, e.before, e.after) == (
            module,
            function,
            tuple(removed),
            tuple(added),
        ):
            return e
    return None
