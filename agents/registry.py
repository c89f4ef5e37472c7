"""``Registry``: names that resolve to components, the user's own code included.

One registry per concept keeps "add a thing" to one module plus one ``register`` call: the
strategies (``agents.strategies.STRATEGIES``) and, in the harness, the model kinds, tool
transports, executors, evaluation protocols and step metrics. A name resolves as

1. a registered name (case-insensitive);
2. a ``package.module:Name`` path: the module is imported and ``Name`` (dots reach inside it)
   becomes an entry through the registry's ``adapt``, as registering it would;
3. a name that an installed package declares in the registry's entry-point ``group``
   (``[project.entry-points."agent_sandbox.strategies"]`` in its ``pyproject.toml``), loaded
   and adapted the same way. ``importlib.metadata`` is imported only when a name is not a
   registered one, so commands that use the built-ins start as fast as before.

What a path or an entry point loaded is kept, so it is imported once per process. An unknown
name is an ``UnknownName`` listing the registered names and the installed plugins; a path that
does not import, or imports the wrong kind of thing, is a ``PluginError`` naming the path and
what was expected. ``mock_tools`` cannot import this module (the libraries import nothing of each
other): its miss policies have a twin of the loader in ``mock_tools.plugins``.

Options: a registered thing declares a pydantic options class (``extra="forbid"``); a registry's
users validate given options with ``validate_options``, whose error names the options the thing
takes. May import nothing but ``agents.errors``.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from agents.errors import AgentsError

__all__ = [
    "DuplicateName",
    "NoOptions",
    "OptionsError",
    "PluginError",
    "Registry",
    "UnknownName",
    "import_path",
    "instances_of",
    "is_path",
    "validate_options",
    "validation_text",
]

T = TypeVar("T")

_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*$")


class UnknownName(AgentsError, LookupError):
    """A name that no entry of a registry has; the message lists the known names."""


class PluginError(UnknownName):
    """A ``package.module:Name`` path or an entry point that does not load, or loads something
    that is not the registry's kind of thing."""


class DuplicateName(AgentsError, ValueError):
    """A name registered twice without ``replace=True``."""


class OptionsError(AgentsError, ValueError):
    """Options a registered thing does not take, or values its options class rejects."""


class NoOptions(BaseModel):
    """The options of a thing that takes none."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def is_path(name: str) -> bool:
    """Whether ``name`` is written as a ``package.module:Name`` path."""
    return bool(_PATH.match(name.strip()))


def import_path(path: str) -> Any:
    """The object a ``package.module:Name`` path names; ``ImportError``/``AttributeError``."""
    module_name, _, attribute = path.strip().partition(":")
    found: Any = importlib.import_module(module_name)
    for part in attribute.split("."):
        found = getattr(found, part)
    return found


Adapt = Callable[[Any, "str | None"], T]
"""Turns a loaded object into an entry: ``(object, entry-point name or None for a path)``; raises
``TypeError``/``ValueError``/``AttributeError`` saying what is wrong with it."""


def instances_of(cls: type[T]) -> Adapt[T]:
    """The ``adapt`` of a registry whose entries are ``cls`` objects: a plugin must be one."""

    def adapt(obj: Any, name: str | None) -> T:
        if not isinstance(obj, cls):
            raise TypeError(f"got {type(obj).__name__}")
        return obj

    return adapt


class Registry(Generic[T]):
    """Entries by case-insensitive name, in registration order, and plugins (see the module).

    ``kind`` names the concept in messages (``"agent"``); ``group`` is the entry-point group of
    its plugins (None: registered names only, no paths either); ``adapt`` makes an entry of a
    loaded object (default: the object as it is); ``expected`` says in a ``PluginError`` what a
    plugin must be."""

    def __init__(
        self,
        kind: str,
        *,
        group: str | None = None,
        adapt: Adapt[T] | None = None,
        expected: str = "",
    ) -> None:
        self.kind = kind
        self.group = group
        self.expected = expected or f"a {kind}"
        self._adapt: Adapt[T] = adapt or (lambda obj, name: obj)
        self._entries: dict[str, T] = {}
        self._loaded: dict[str, T] = {}

    def register(self, name: str, entry: T, *, replace: bool = False) -> T:
        key = name.strip().lower()
        if not key:
            raise ValueError(f"a {self.kind} needs a name")
        if key in self._entries and not replace:
            raise DuplicateName(f"{self.kind} {key!r} is already registered")
        self._entries[key] = entry
        return entry

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
        """The entry ``name`` resolves to (registered, path or plugin), or None;
        ``PluginError`` for a path or plugin that does not load."""
        entry = self._entries.get(name.strip().lower())
        if entry is not None or self.group is None:
            return entry
        key = name.strip() if is_path(name) else name.strip().lower()
        if key in self._loaded:
            return self._loaded[key]
        if is_path(key):
            loaded = self._load(key, lambda: import_path(key), None, "cannot import")
        elif key:
            point = self._entry_point(key)
            if point is None:
                return None
            where = f"plugin {key!r} ({point.value})"
            loaded = self._load(where, point.load, point.name, "cannot load")
        else:
            return None
        self._loaded[key] = loaded
        return loaded

    def get(self, name: str) -> T:
        entry = self.find(name)
        if entry is None:
            raise UnknownName(self.unknown(name))
        return entry

    def unknown(self, name: str, known: list[str] | None = None, *, label: str = "known") -> str:
        """The message for an unknown ``name``: the registered names (or ``known``, their
        spellings) and the installed plugins, one line."""
        listed = ", ".join(known if known is not None else self.names())
        message = f"unknown {self.kind} {name!r}; {label}: {listed}"
        plugins = self.plugin_names()
        if plugins:
            message += f"; installed plugins: {', '.join(plugins)}"
        if self.group is not None:
            message += "; or a package.module:Name path"
        return message

    def plugin_names(self) -> list[str]:
        """Names the installed packages declare in ``group`` (registered names left out)."""
        if self.group is None:
            return []
        from importlib.metadata import entry_points  # slow to import: only when needed

        found = {p.name.strip().lower() for p in entry_points(group=self.group)}
        return sorted(found - set(self._entries))

    def names(self) -> list[str]:
        """The registered names (the built-ins and whatever code registered), not plugins."""
        return list(self._entries)

    def items(self) -> list[tuple[str, T]]:
        return list(self._entries.items())

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered (plugins are not looked up: see ``find``)."""
        return isinstance(name, str) and name.strip().lower() in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def _entry_point(self, key: str) -> Any:
        from importlib.metadata import entry_points  # slow to import: only when needed

        assert self.group is not None
        for point in entry_points(group=self.group):
            if point.name.strip().lower() == key:
                return point
        return None

    def _load(self, where: str, load: Callable[[], Any], name: str | None, failed: str) -> T:
        try:
            obj = load()
        except (Exception, SystemExit, KeyboardInterrupt) as e:  # the module's own code ran
            text = (str(e).strip().splitlines() or [""])[0]
            raise PluginError(f"{failed} {self.kind} {where}: {type(e).__name__}: {text}") from e
        try:
            return self._adapt(obj, name)
        except (Exception, SystemExit, KeyboardInterrupt) as e:  # a class made with no arguments
            raise PluginError(
                f"{self.kind} {where} is not {self.expected}: {_first_line(e)}"
            ) from e


def validate_options(
    what: str, options_class: type[BaseModel], given: Mapping[str, Any] | None
) -> BaseModel:
    """``given`` validated by ``options_class``; ``OptionsError`` naming the options it takes
    (``what`` names the thing in the message: ``"executor 'ray'"``)."""
    values = dict(given or {})
    takes = list(options_class.model_fields)
    unknown = sorted(set(values) - set(takes))
    if unknown:
        taken = ", ".join(takes) if takes else "none"
        raise OptionsError(
            f"{what} does not take option(s) {', '.join(map(repr, unknown))}; it takes: {taken}"
        )
    try:
        return options_class.model_validate(values)
    except ValidationError as e:
        raise OptionsError(f"{what}: {validation_text(e)}") from e


def validation_text(e: ValidationError) -> str:
    """A pydantic error as one line: ``field: message; ...``."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}" for err in e.errors()
    )


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return text[0] if text else type(e).__name__
