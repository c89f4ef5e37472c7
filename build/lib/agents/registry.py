"""``Registry``: names that resolve to components, with an error that lists the known names.

One registry per concept keeps "add a thing" to one module plus one ``register`` call: the
strategies (``agents.strategies.STRATEGIES``) and, in the harness, the model kinds and tool
transports. May import nothing but ``agents.errors``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

from agents.errors import AgentsError

__all__ = ["DuplicateName", "Registry", "UnknownName"]

T = TypeVar("T")


class UnknownName(AgentsError, LookupError):
    """A name that no entry of a registry has; the message lists the known names."""


class DuplicateName(AgentsError, ValueError):
    """A name registered twice without ``replace=True``."""


class Registry(Generic[T]):
    """Entries by case-insensitive name, in registration order."""

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self._entries: dict[str, T] = {}

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        key = name.strip().lower()
        if not key:
            raise ValueError(f"a {self.kind} needs a name")
        if key in self._entries and not replace:
            raise DuplicateName(f"{self.kind} {key!r} is already registered")
        self._entries[key] = entry
        return entry

    def unregister(self, name: str) -> None:
        self._entries.pop(name.strip().lower(), None)

    @contextmanager
    def registered(self, name: str, entry: T) -> Iterator[T]:
        """Register ``entry`` for the duration of a ``with`` block (tests, notebooks)."""
        key = name.strip().lower()
        previous = self._entries.get(key)
        self.register(key, entry, replace=True)
        try:
            yield entry
        finally:
            if previous is None:
                self._entries.pop(key, None)
            else:
                self._entries[key] = previous

    def find(self, name: str) -> T | None:
        return self._entries.get(name.strip().lower())

    def get(self, name: str) -> T:
        entry = self.find(name)
        if entry is None:
            raise UnknownName(f"unknown {self.kind} {name!r}; known: {', '.join(self.names())}")
        return entry

    def names(self) -> list[str]:
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return list(self._entries.items())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip().lower() in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)
