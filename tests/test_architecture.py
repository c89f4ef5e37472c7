"""The import graph: two standalone libraries under a layered harness, and no hidden cycles.

Every import counts, those inside functions and under ``TYPE_CHECKING`` included. The layers
of ``sandbox`` are listed in ``ALLOWED`` (docs/architecture.md draws the same picture): a group may
import only the groups listed for it, so a new dependency is a deliberate edit of this table.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("agents", "mock_tools", "sandbox")

ALLOWED: dict[str, set[str]] = {
    "mock_tools": set(),
    "agents": set(),
    "sandbox.errors": set(),
    "sandbox.store": {"agents", "mock_tools", "sandbox.errors"},
    "sandbox.models": {"agents", "mock_tools", "sandbox.errors", "sandbox.store"},
    "sandbox.tool_envs": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.store",
        "sandbox.models",
    },
    "sandbox.interop": {"agents", "mock_tools", "sandbox.errors", "sandbox.store"},
    "sandbox.users": {"agents", "mock_tools", "sandbox.errors", "sandbox.store", "sandbox.models"},
    "sandbox.eval": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.store",
        "sandbox.models",
        "sandbox.interop",  # the ToolEval judge reads ToolBench's converted answers
    },
    "sandbox.probe": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.store",
        "sandbox.models",
        "sandbox.tool_envs",  # the reference steps' answers, through the run's tools
        "sandbox.eval",
    },
    "sandbox.external": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.tool_envs",  # an episode's REST routes are forwarded through its tool env
    },
    "sandbox.run": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.store",
        "sandbox.models",
        "sandbox.tool_envs",
        "sandbox.eval",
        "sandbox.users",
    },
    "sandbox.replay": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.store",
        "sandbox.models",
        "sandbox.tool_envs",
        "sandbox.interop",
        "sandbox.run",
        "sandbox.users",
    },
    "sandbox.compare": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.store",
        "sandbox.eval",
        "sandbox.run",
    },
    "sandbox.view": {
        "agents",
        "mock_tools",
        "sandbox.errors",
        "sandbox.store",
        "sandbox.eval",
        "sandbox.replay",
    },
}
TOP = {"sandbox", "sandbox.cli", "sandbox.__main__", "sandbox.commands"}
"""The command line: may import anything below it."""


def _modules() -> dict[str, Path]:
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for file in (ROOT / package).rglob("*.py"):
            parts = list(file.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            out[".".join(parts)] = file
    return out


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The project module an imported dotted name lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(file: Path) -> Iterator[tuple[str, ast.AST]]:
    for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                yield f"{node.module}.{alias.name}", node


def _group(module: str) -> str:
    parts = module.split(".")
    if parts[0] != "sandbox":
        return parts[0]
    return ".".join(parts[:2])


def _graph() -> nx.DiGraph:
    graph: nx.DiGraph = nx.DiGraph()
    for module, file in MODULES.items():
        graph.add_node(module)
        for name, _ in _imports(file):
            target = _owner(name)
            if target is not None and target != module:
                graph.add_edge(module, target)
    return graph


def test_the_module_graph_has_no_cycle() -> None:
    cycles = list(nx.simple_cycles(_graph()))
    assert cycles == [], " | ".join(" -> ".join(c) for c in cycles[:5])


def test_the_libraries_stand_alone() -> None:
    graph = _graph()
    for a, b in graph.edges:
        if a.split(".")[0] in ("agents", "mock_tools"):
            assert b.split(".")[0] == a.split(".")[0], f"{a} imports {b}"


def test_every_group_imports_only_its_layers() -> None:
    groups: nx.DiGraph = nx.DiGraph()
    wrong = []
    for a, b in _graph().edges:
        ga, gb = _group(a), _group(b)
        if ga == gb:
            continue
        groups.add_edge(ga, gb)
        if ga in TOP:
            continue
        if ga not in ALLOWED:
            wrong.append(f"{a}: group {ga} is not in the layer table")
        elif gb not in ALLOWED[ga]:
            wrong.append(f"{a} imports {b} ({ga} -> {gb} is not an allowed layer)")
    assert wrong == []
    assert list(nx.simple_cycles(groups)) == []


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_reads_another_modules_private_names(module: str) -> None:
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    imported_modules: dict[str, str] = {}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            owner = _owner(node.module)
            for alias in node.names:
                if owner and owner != module and alias.name.startswith("_"):
                    found.append(f"from {node.module} import {alias.name}")
                full = f"{node.module}.{alias.name}"
                if full in MODULES:
                    imported_modules[alias.asname or alias.name] = full
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES:
                    imported_modules[alias.asname or alias.name] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in imported_modules
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
        ):
            found.append(f"{node.value.id}.{node.attr}")
    assert found == []


def test_no_name_is_decided_by_an_if_chain_on_agent_names() -> None:
    offenders = []
    for module, file in MODULES.items():
        text = file.read_text(encoding="utf-8")
        for needle in ("_suite_path", "if agent ==", "elif agent =="):
            if needle in text:
                offenders.append(f"{module}: {needle}")
    assert offenders == []
