"""Lazily exported package names (``mock_tools.lazy`` / ``agents.lazy``): every name in ``__all__``
resolves to the object its module defines, and importing a package loads none of them."""

from __future__ import annotations

import importlib
import subprocess
import sys
from types import ModuleType

import pytest

LAZY_PACKAGES = [
    "mock_tools",
    "agents",
    "agents.models",
    "sandbox.store",
    "sandbox.run",
    "sandbox.eval",
    "sandbox.interop",
    "sandbox.tool_envs",
    "sandbox.compare",
    "sandbox.replay",
    "sandbox.view",
    "sandbox.probe",
    "sandbox.eval.steps",
]


def _fresh(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_every_exported_name_resolves(name: str) -> None:
    package = importlib.import_module(name)
    table = package.__dict__["_EXPORTS"]
    assert sorted(package.__all__) == sorted(table)
    assert len(set(package.__all__)) == len(package.__all__)
    for export in package.__all__:
        value = getattr(package, export)
        assert not isinstance(value, ModuleType), export
        assert value is getattr(importlib.import_module(table[export]), export)
    assert set(package.__all__) <= set(dir(package))


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_importing_the_package_loads_no_exported_module(name: str) -> None:
    code = (
        f"import sys, {name} as p; t = p.__dict__['_EXPORTS']; "
        "print(sorted(m for m in set(t.values()) if m in sys.modules))"
    )
    assert _fresh(code) == "[]"


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_an_unknown_name_is_an_attribute_error(name: str) -> None:
    package = importlib.import_module(name)
    with pytest.raises(AttributeError, match="no_such_name"):
        package.no_such_name  # noqa: B018


def test_a_name_shared_with_its_submodule_stays_the_export() -> None:
    # ``mock_tools.http_app`` is both a module and the function it defines; importing the module
    # first (as the tool environments do) must not replace the exported function.
    code = (
        "import types, mock_tools.http_app, mock_tools; from mock_tools import http_app; "
        "print(callable(http_app) and not isinstance(http_app, types.ModuleType), "
        "http_app is mock_tools.http_app)"
    )
    assert _fresh(code) == "True True"


def test_import_mock_tools_loads_no_web_framework() -> None:
    code = "import sys, mock_tools; print(sorted({'fastapi', 'httpx'} & set(sys.modules)))"
    assert _fresh(code) == "[]"
