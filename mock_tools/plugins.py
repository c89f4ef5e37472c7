"""``PluginRegistry``: names of mock_tools components, the user's own code included.

The miss policies (``mock_tools.miss.MISS_POLICIES``) resolve a name as

1. a registered name (case-insensitive);
2. a ``package.module:Name`` path: the module is imported and ``Name`` adapted into an entry
   the way registering it would;
3. a name an installed package declares in the registry's entry-point group
   (``agent_sandbox.miss_policies``), loaded and adapted the same way; ``importlib.metadata``
   is imported only when a name is not a registered one.

A deliberate twin of ``agents.registry.Registry`` (same resolution, same messages): the two
libraries import nothing of each other, and a loader this small is cheaper to keep twice than a
third package both would import. ``tests/test_plugin_registries.py`` runs the same cases on
both. ``validate_options`` validates a component's options with its pydantic options class;
``option_pairs`` reads them from ``KEY=VALUE`` flags. ``plugin_code(what)`` is the twin of
``agents.plugin_calls.plugin_code``: what a policy's code raises (``SystemExit``,
``KeyboardInterrupt`` and a ``CancelledError`` of its own included; a cancellation from outside
passes) becomes a ``PluginFailed`` naming it.
Imports nothing of the project but ``mock_tools.errors``.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from mock_tools.errors import MockToolsError

__all__ = [
    "PluginError",
    "PluginFailed",
    "PluginRegistry",
    "UnknownName",
    "option_pairs",
    "option_value",
    "plugin_code",
    "raised_text",
    "validate_options",
]

T = TypeVar("T")

_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class UnknownName(MockToolsError, LookupError):
    """A name nothing resolves to; the message lists the registered names and the plugins."""


class PluginError(UnknownName):
    """A path or an entry point that does not load, or loads the wrong kind of thing."""


class PluginFailed(MockToolsError):
    """Plugin code raised, or returned what its contract forbids (one line naming it)."""


def raised_text(e: BaseException) -> str:
    """``Type: first line of the message``, one line (``agents.plugin_calls.raised_text``)."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0]}" if text else type(e).__name__


def _cancelled_from_outside() -> bool:
    try:
        task = asyncio.current_task()
    except RuntimeError:
        return False
    cancelling = getattr(task, "cancelling", None) if task is not None else None
    return task is not None and (cancelling is None or bool(cancelling()))


@contextmanager
def plugin_code(what: str) -> Iterator[None]:
    """Run a plugin's code inside; what it raises becomes a ``PluginFailed`` naming ``what``
    (a ``MockToolsError``, a user error that says what to do already, passes as it is)."""
    try:
        yield
    except MockToolsError:
        raise
    except asyncio.CancelledError as e:
        if _cancelled_from_outside():
            raise
        raise PluginFailed(f"{what} raised {raised_text(e)} of its own") from e
    except (Exception, SystemExit, KeyboardInterrupt) as e:
        raise PluginFailed(f"{what} raised {raised_text(e)}") from e


class PluginRegistry(Generic[T]):
    """Entries by case-insensitive name, and plugins: ``kind`` names the concept in messages,
    ``group`` is the entry-point group, ``adapt(object, entry-point name or None)`` makes an
    entry (raising ``TypeError``/``ValueError``/``AttributeError``), ``expected`` says what a
    plugin must be."""

    def __init__(
        self, kind: str, *, group: str, adapt: Callable[[Any, str | None], T], expected: str
    ) -> None:
        self.kind = kind
        self.group = group
        self.expected = expected
        self._adapt = adapt
        self._entries: dict[str, T] = {}
        self._loaded: dict[str, T] = {}

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        key = name.strip().lower()
        if not key:
            raise ValueError(f"a {self.kind} needs a name")
        if key in self._entries and not replace:
            raise ValueError(f"{self.kind} {key!r} is already registered")
        self._entries[key] = entry
        return entry

    @contextmanager
    def registered(self, name: str, entry: T) -> Iterator[T]:
        """Register ``entry`` for the duration of a ``with`` block (tests)."""
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
        """The entry of ``name`` (registered, path or plugin), or None; ``PluginError``."""
        entry = self._entries.get(name.strip().lower())
        if entry is not None:
            return entry
        path = bool(_PATH.match(name.strip()))
        key = name.strip() if path else name.strip().lower()
        if key not in self._loaded:
            if path:
                loaded = self._load(key, lambda: _import_path(key), None, "cannot import")
            else:
                point = self._entry_point(key) if key else None
                if point is None:
                    return None
                where = f"plugin {key!r} ({point.value})"
                loaded = self._load(where, point.load, point.name, "cannot load")
            self._loaded[key] = loaded
        return self._loaded[key]

    def get(self, name: str) -> T:
        entry = self.find(name)
        if entry is None:
            raise UnknownName(self.unknown(name))
        return entry

    def unknown(self, name: str) -> str:
        message = f"unknown {self.kind} {name!r}; known: {', '.join(self._entries)}"
        plugins = self.plugin_names()
        if plugins:
            message += f"; installed plugins: {', '.join(plugins)}"
        return message + "; or a package.module:Name path"

    def plugin_names(self) -> list[str]:
        from importlib.metadata import entry_points  # slow to import: only when needed

        found = {p.name.strip().lower() for p in entry_points(group=self.group)}
        return sorted(found - set(self._entries))

    def names(self) -> list[str]:
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return list(self._entries.items())

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name.strip().lower() in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def _entry_point(self, key: str) -> Any:
        from importlib.metadata import entry_points  # slow to import: only when needed

        return next((p for p in entry_points(group=self.group) if p.name.lower() == key), None)

    def _load(self, where: str, load: Callable[[], Any], name: str | None, failed: str) -> T:
        try:
            obj = load()
        except (Exception, SystemExit, KeyboardInterrupt) as e:  # the module's own code ran
            text = (str(e).strip().splitlines() or [""])[0]
            raise PluginError(f"{failed} {self.kind} {where}: {type(e).__name__}: {text}") from e
        try:
            return self._adapt(obj, name)
        except (Exception, SystemExit, KeyboardInterrupt) as e:  # a class made with no arguments
            detail = (str(e).strip().splitlines() or [type(e).__name__])[0]
            raise PluginError(f"{self.kind} {where} is not {self.expected}: {detail}") from e


def _import_path(path: str) -> Any:
    module_name, _, attribute = path.partition(":")
    found: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


def validate_options(
    what: str, options_class: type[BaseModel], given: Mapping[str, Any] | None
) -> BaseModel:
    """``given`` validated by ``options_class``; a one-line ``MockToolsError`` naming the options
    it takes (``what``: ``"miss policy 'nearest'"``)."""
    values = dict(given or {})
    takes = list(options_class.model_fields)
    unknown = sorted(set(values) - set(takes))
    if unknown:
        raise MockToolsError(
            f"{what} does not take option(s) {', '.join(map(repr, unknown))}; "
            f"it takes: {', '.join(takes) or 'none'}"
        )
    try:
        return options_class.model_validate(values)
    except ValidationError as e:
        details = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'options'}: "
            + str(err["msg"]).removeprefix("Value error, ")
            for err in e.errors()
        )
        raise MockToolsError(f"{what}: {details}") from e


def option_pairs(pairs: Iterable[str], flag: str) -> dict[str, Any]:
    """Options given as ``KEY=VALUE`` flags (``flag`` names them in errors): VALUE is read as
    JSON when it is JSON, else kept as text; ``-`` in a key is ``_``; a later key wins."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise MockToolsError(f"{flag} expects KEY=VALUE, got {pair!r}")
        options[key.strip().replace("-", "_")] = option_value(text)
    return options


def option_value(text: str) -> Any:
    """A JSON value when the text is one, else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text
