"""How a registry resolves a name: registered, ``package.module:Name``, or an installed plugin.

``agents.registry.Registry`` and its twin ``mock_tools.plugins.PluginRegistry`` (the libraries
import nothing of each other) run the same cases: a registered name wins and never looks at the
installed packages; a path is imported and adapted once; a name declared in the registry's
entry-point group loads lazily; an unknown name lists the registered names and the installed
plugins in one line; a path or plugin that does not load, or loads the wrong kind of thing, is a
one-line error naming it and what was expected. Plugins here are modules written into a
temporary folder on ``sys.path``, beside a ``.dist-info`` declaring their entry points.
"""

from __future__ import annotations

import importlib.metadata
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agents.errors import AgentsError
from agents.registry import PluginError, Registry, UnknownName
from mock_tools.errors import MockToolsError
from mock_tools.plugins import PluginError as MockPluginError
from mock_tools.plugins import PluginRegistry
from mock_tools.plugins import UnknownName as MockUnknownName

GROUP = "test_plugin_registries.widgets"


class Widget:
    def __init__(self, name: str) -> None:
        self.name = name


def _adapt(obj: Any, name: str | None) -> Widget:
    """A widget as it is, or a class of one, named by its entry point when it has one."""
    if isinstance(obj, type) and issubclass(obj, Widget):
        return obj(name or obj.__name__.lower())
    if not isinstance(obj, Widget):
        raise TypeError(f"got {type(obj).__name__}")
    return obj


def _agents(kind: str) -> Any:
    return Registry(kind, group=GROUP, adapt=_adapt, expected="a widget")


def _mock_tools(kind: str) -> Any:
    return PluginRegistry(kind, group=GROUP, adapt=_adapt, expected="a widget")


IMPLEMENTATIONS: dict[str, tuple[Callable[[str], Any], type[Exception], type[Exception]]] = {
    "agents": (_agents, UnknownName, PluginError),
    "mock_tools": (_mock_tools, MockUnknownName, MockPluginError),
}


@pytest.fixture(params=sorted(IMPLEMENTATIONS))
def impl(request: pytest.FixtureRequest) -> tuple[Any, type[Exception], type[Exception]]:
    make, unknown, plugin_error = IMPLEMENTATIONS[request.param]
    registry = make("widget")
    registry.register("Plain", Widget("plain"))
    return registry, unknown, plugin_error


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A folder on ``sys.path`` holding the plugin package ``widgetplug`` and its dist-info."""
    package = tmp_path / "widgetplug"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "parts.py").write_text(
        "from test_plugin_registries import Widget\n"
        "IMPORTS = []\n"
        "IMPORTS.append(1)\n"
        "class Gear(Widget):\n    pass\n"
        "SPROCKET = Widget('sprocket')\n"
        "NOT_A_WIDGET = 42\n",
        encoding="utf-8",
    )
    info = tmp_path / "widgetplug-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: widgetplug\nVersion: 1.0\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(
        f"[{GROUP}]\n"
        "gear = widgetplug.parts:Gear\n"
        "broken = widgetplug.missing:Thing\n"
        "odd = widgetplug.parts:NOT_A_WIDGET\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name in [m for m in sys.modules if m.split(".")[0] == "widgetplug"]:
        del sys.modules[name]


def test_both_error_families_are_their_librarys(impl: Any) -> None:
    _, unknown, plugin_error = impl
    assert issubclass(plugin_error, unknown)
    assert issubclass(unknown, AgentsError) or issubclass(unknown, MockToolsError)


def test_a_registered_name_never_reads_the_installed_packages(
    impl: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    registry, _, _ = impl

    def forbidden(**_: Any) -> Any:
        raise AssertionError("entry points read for a registered name")

    monkeypatch.setattr(importlib.metadata, "entry_points", forbidden)
    assert registry.get(" PLAIN ").name == "plain"
    assert "plain" in registry and "gear" not in registry
    assert registry.names() == ["plain"]


def test_a_path_is_imported_once_and_adapted(impl: Any, site: Path) -> None:
    registry, _, _ = impl
    gear = registry.get("widgetplug.parts:Gear")
    assert isinstance(gear, Widget) and gear.name == "gear"
    assert registry.get("widgetplug.parts:Gear") is gear  # kept: not adapted again
    assert registry.get("widgetplug.parts:SPROCKET").name == "sprocket"
    assert sys.modules["widgetplug.parts"].IMPORTS == [1]
    assert "widgetplug.parts:Gear" not in registry  # resolvable, not registered
    assert registry.names() == ["plain"]


def test_an_installed_plugin_resolves_by_its_entry_point_name(impl: Any, site: Path) -> None:
    registry, _, _ = impl
    gear = registry.get("GEAR")
    assert gear.name == "gear" and registry.find("gear") is gear
    assert registry.find("nothing-like-it") is None


def test_an_unknown_name_lists_the_known_and_the_installed(impl: Any, site: Path) -> None:
    registry, unknown, plugin_error = impl
    with pytest.raises(unknown) as info:
        registry.get("sprockets")
    message = str(info.value)
    assert not isinstance(info.value, plugin_error)
    assert "\n" not in message
    assert message.startswith("unknown widget 'sprockets'; known: plain")
    assert "installed plugins: broken, gear, odd" in message


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("widgetplug.nowhere:Gear", "cannot import widget widgetplug.nowhere:Gear: "),
        ("widgetplug.parts:Cog", "cannot import widget widgetplug.parts:Cog: AttributeError"),
        ("widgetplug.parts:NOT_A_WIDGET", "is not a widget: got int"),
        ("broken", "cannot load widget plugin 'broken' (widgetplug.missing:Thing)"),
        ("odd", "widget plugin 'odd' (widgetplug.parts:NOT_A_WIDGET) is not a widget: got int"),
    ],
)
def test_what_does_not_load_is_one_line_naming_it(
    impl: Any, site: Path, name: str, says: str
) -> None:
    registry, _, plugin_error = impl
    with pytest.raises(plugin_error) as info:
        registry.get(name)
    assert says in str(info.value) and "\n" not in str(info.value)
