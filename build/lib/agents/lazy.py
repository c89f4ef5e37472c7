"""Package exports loaded on first use (PEP 562 with a module class, so heavy modules such as
the ones that import FastAPI load only when one of their names is used).

A package's ``__init__`` lists ``name -> module`` in ``_EXPORTS``, repeats the imports under
``TYPE_CHECKING`` for type checkers and IDEs, and ends with ``lazy_package(__name__, _EXPORTS)``.
Imports nothing heavy.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Mapping
from types import ModuleType
from typing import Any

__all__ = ["LazyPackage", "lazy_package"]

_TABLE = "_EXPORTS"


class LazyPackage(ModuleType):
    """A package module whose exported names resolve, once, on first attribute access."""

    def __getattr__(self, name: str) -> Any:
        module = self.__dict__.get(_TABLE, {}).get(name)
        if module is None:
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        ModuleType.__setattr__(self, name, value)
        return value

    def __setattr__(self, name: str, value: Any) -> None:
        # Importing the submodule ``pkg.x`` binds ``pkg.x`` to that module; when ``x`` is also an
        # exported name of ``pkg.x`` itself (``http_app``), the export keeps the name.
        exported = self.__dict__.get(_TABLE, {}).get(name)
        if isinstance(value, ModuleType) and exported == value.__name__ and hasattr(value, name):
            value = getattr(value, name)
        ModuleType.__setattr__(self, name, value)

    def __dir__(self) -> list[str]:
        return sorted({*self.__dict__, *self.__dict__.get(_TABLE, {})})


def lazy_package(name: str, exports: Mapping[str, str]) -> None:
    """Make the already-imported package ``name`` resolve ``exports`` (name -> module) lazily."""
    module = sys.modules[name]
    module.__dict__[_TABLE] = dict(exports)
    module.__class__ = LazyPackage
