"""The determinism check of world code: an AST walk that names each rule broken, by file:line.

World code must be pure given its ``Context`` (docs/worlds.md). Refused:

- the wall clock: the ``time`` module, ``datetime.now`` / ``utcnow`` / ``today``,
  ``date.today``;
- the process's random generators: the module-level functions of ``random`` (``random.Random``
  seeded by the code itself is allowed; ``ctx.rng`` is the one to use), ``secrets``, ``uuid``
  (``uuid1``/``uuid4``), ``os.urandom``;
- ``hash()`` (of strings it changes with every process) and ``id()`` (an address);
- the network, files and the environment: the modules ``os``, ``sys``, ``socket``, ``ssl``,
  ``subprocess``, ``shutil``, ``pathlib``, ``tempfile``, ``glob``, ``io``, ``urllib``, ``http``,
  ``httpx``, ``requests``, ``aiohttp``, ``asyncio``, ``threading``, ``multiprocessing``,
  ``ctypes``, ``importlib``, ``pickle``, ``sqlite3``; the builtins ``open``, ``input``,
  ``eval``, ``exec``, ``compile``, ``__import__``, ``breakpoint``, ``globals``.

It is a lint, not a sandbox: code that works around it on purpose (``getattr(__builtins__,
...)``) is not caught. Its job is to stop the mistakes that make a world answer differently from
run to run. Imports nothing of the project.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Violation", "lint_file", "lint_source"]

FORBIDDEN_MODULES = frozenset(
    {
        "time",
        "os",
        "sys",
        "socket",
        "ssl",
        "subprocess",
        "shutil",
        "pathlib",
        "tempfile",
        "glob",
        "io",
        "urllib",
        "http",
        "httpx",
        "requests",
        "aiohttp",
        "asyncio",
        "threading",
        "multiprocessing",
        "ctypes",
        "importlib",
        "pickle",
        "sqlite3",
        "secrets",
    }
)
FORBIDDEN_BUILTINS = {
    "open": "reads or writes files",
    "input": "reads the terminal",
    "eval": "runs code the lint cannot see",
    "exec": "runs code the lint cannot see",
    "compile": "makes code the lint cannot see",
    "__import__": "imports modules the lint cannot see",
    "breakpoint": "stops for a debugger",
    "globals": "reaches module state",
    "hash": "differs from process to process for strings (use ctx.rng or the values)",
    "id": "is a memory address, different on every run",
}
_CLOCK = {"now", "utcnow", "today", "fromtimestamp", "utcfromtimestamp"}
_UUID = {"uuid1", "uuid4"}


@dataclass(frozen=True)
class Violation:
    file: str
    line: int
    rule: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.rule}"


def lint_file(path: Path) -> list[Violation]:
    """Every rule ``path`` breaks (a file that does not parse is one violation)."""
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        return [Violation(str(path), 0, f"cannot read: {e}")]
    return lint_source(source, str(path))


def lint_source(source: str, file: str = "<world>") -> list[Violation]:
    try:
        tree = ast.parse(source, filename=file)
    except SyntaxError as e:
        return [Violation(file, e.lineno or 0, f"syntax error: {e.msg}")]
    checker = _Checker(file)
    checker.visit(tree)
    return sorted(checker.found, key=lambda v: (v.line, v.rule))


class _Checker(ast.NodeVisitor):
    def __init__(self, file: str) -> None:
        self.file = file
        self.found: list[Violation] = []
        self.aliases: dict[str, str] = {}
        """Local name -> the module (or module.attribute) it stands for."""

    def _add(self, node: ast.AST, rule: str) -> None:
        self.found.append(Violation(self.file, getattr(node, "lineno", 0), rule))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            top = alias.name.split(".")[0]
            if top in FORBIDDEN_MODULES:
                self._add(node, f"imports {alias.name}: {_why(top)}")
            self.aliases[alias.asname or top] = alias.name if alias.asname else top
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        top = module.split(".")[0]
        if node.level == 0 and top in FORBIDDEN_MODULES:
            self._add(node, f"imports from {module}: {_why(top)}")
        for alias in node.names:
            full = f"{module}.{alias.name}"
            if module == "random" and alias.name != "Random":
                self._add(
                    node,
                    f"imports random.{alias.name}: the process's shared generator (use ctx.rng)",
                )
            if module == "uuid" and alias.name in _UUID:
                self._add(node, f"imports uuid.{alias.name}: random ids (use ctx.new_id)")
            self.aliases[alias.asname or alias.name] = full
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        if (
            isinstance(func, ast.Name)
            and func.id in FORBIDDEN_BUILTINS
            and func.id not in self.aliases
        ):
            self._add(node, f"calls {func.id}(): it {FORBIDDEN_BUILTINS[func.id]}")
        dotted = self._dotted(func)
        if dotted:
            parts = dotted.split(".")
            if parts[-1] in _CLOCK and any(p in ("datetime", "date") for p in parts[:-1]):
                self._add(node, f"calls {dotted}(): the wall clock (use ctx.now)")
            elif parts[0] == "random" and len(parts) == 2 and parts[1] != "Random":
                self._add(node, f"calls {dotted}(): the process's shared generator (use ctx.rng)")
            elif parts[0] == "uuid" and parts[-1] in _UUID:
                self._add(node, f"calls {dotted}(): random ids (use ctx.new_id)")
        self.generic_visit(node)

    def _dotted(self, node: ast.AST) -> str | None:
        parts: list[str] = []
        while isinstance(node, ast.Attribute):
            parts.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name):
            return None
        head = self.aliases.get(node.id, node.id)
        return ".".join([head, *reversed(parts)])


def _why(module: str) -> str:
    if module == "time":
        return "the wall clock (use ctx.now)"
    if module == "secrets":
        return "random values (use ctx.rng)"
    return "world code reaches no network, file, process or environment"
