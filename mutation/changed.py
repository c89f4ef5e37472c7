"""The core functions a change touched, as mutmut name patterns (for the check CI runs).

A change is the difference between a base commit and the working tree. Its base is, in order:
the ``base`` given; the merge base with ``main`` (or ``origin/main``) when HEAD is not on it;
HEAD's parent otherwise (a commit on main: its own change). A function is touched when a line
of it (decorators and nested definitions included) was added or changed; mutmut mutates
top-level functions and the methods of top-level classes, so a change inside a nested function
touches the function that holds it.
"""

from __future__ import annotations

import ast
import re
import subprocess
from collections.abc import Iterable
from pathlib import Path

from mutation.modules import GROUPS, module_path

__all__ = ["change_base", "changed_lines", "importing_tests", "touched_functions"]

_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)


def _git(root: Path, *args: str) -> str | None:
    done = subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def change_base(root: Path, base: str | None = None) -> str | None:
    """The commit a change is measured from (see the module docstring); None without git."""
    if base:
        return _git(root, "rev-parse", "--verify", f"{base}^{{commit}}")
    head = _git(root, "rev-parse", "HEAD")
    for main in ("main", "origin/main"):
        fork = _git(root, "merge-base", "HEAD", main)
        if fork is not None and fork != head:
            return fork
    return _git(root, "rev-parse", "--verify", "HEAD^")


def changed_lines(root: Path, base: str, path: Path) -> set[int] | None:
    """Lines of ``path`` (as it is now) added or changed since ``base``; None: a new file."""
    if _git(root, "cat-file", "-e", f"{base}:{path.as_posix()}") is None:
        return None
    diff = _git(root, "diff", "-U0", base, "--", path.as_posix()) or ""
    lines: set[int] = set()
    for match in _HUNK.finditer(diff):
        start, count = int(match.group(1)), int(match.group(2) or 1)
        lines.update(range(start, start + count))
    return lines


def _functions(source: str) -> Iterable[tuple[str, int, int]]:
    """(mutmut's mangled name, first line, last line) of every function mutmut mutates."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            yield f"x_{node.name}", _first_line(node), node.end_lineno or node.lineno
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    name = f"x\u01c1{node.name}\u01c1{item.name}"
                    yield name, _first_line(item), item.end_lineno or item.lineno


def _first_line(node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([node.lineno, *(d.lineno for d in node.decorator_list)])


def touched_functions(root: Path, base: str) -> dict[str, list[str]]:
    """Core module -> mutmut name patterns of its functions the change touched."""
    touched: dict[str, list[str]] = {}
    for group in GROUPS:
        for module in group.modules:
            path = module_path(module)
            if not (root / path).exists():
                continue
            lines = changed_lines(root, base, path)
            source = (root / path).read_text(encoding="utf-8")
            names = [
                f"{module}.{name}__mutmut_*"
                for name, first, last in _functions(source)
                if lines is None or lines.intersection(range(first, last + 1))
            ]
            if names:
                touched[module] = names
    return touched


def _reexports(root: Path, module: str) -> bool:
    """Whether ``module``'s package re-exports it (its ``__init__`` imports from it)."""
    package, _, last = module.rpartition(".")
    init = root / Path(*package.split(".")) / "__init__.py"
    if not package or not init.is_file():
        return False
    for node in ast.walk(ast.parse(init.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and (
            (node.level == 0 and node.module == module) or (node.level == 1 and node.module == last)
        ):
            return True
    return False


def _imports(source: str, module: str, *, via_package: bool) -> bool:
    """Whether ``source`` imports ``module`` (``import a.b``, ``from a.b import x``,
    ``from a import b``; with ``via_package``, any ``from a import x``)."""
    package, _, last = module.rpartition(".")
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import) and any(a.name == module for a in node.names):
            return True
        if isinstance(node, ast.ImportFrom) and node.level == 0:
            if node.module == module or (node.module == package and via_package):
                return True
            if node.module == package and any(a.name == last for a in node.names):
                return True
    return False


def importing_tests(
    root: Path, selection: Iterable[str], deselect: Iterable[str], modules: Iterable[str]
) -> tuple[str, ...]:
    """The test files of ``selection`` (files and folders under ``root``) that import one of
    ``modules`` themselves, ``deselect`` left out: the tests written for that code, the
    selection CI's bounded check starts from. Importing a package that re-exports one of the
    modules counts as importing it."""
    modules = list(modules)
    via_package = {m: _reexports(root, m) for m in modules}
    left_out = {d.split("::")[0] for d in deselect}
    files: list[Path] = []
    for entry in selection:
        path = root / entry.split("::")[0]
        files += sorted(path.rglob("test_*.py")) if path.is_dir() else [path]
    found = []
    for file in dict.fromkeys(files):
        name = file.relative_to(root).as_posix()
        if name in left_out or not file.is_file():
            continue
        source = file.read_text(encoding="utf-8")
        if any(_imports(source, m, via_package=via_package[m]) for m in modules):
            found.append(name)
    return tuple(found)
