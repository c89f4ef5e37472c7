"""A copy of BFCL's evaluation package (``bfcl-eval``) that the user owns: its multi-turn data,
its function docs and its API classes, read where they are and never copied.

``BfclSource.open(path)`` takes the wheel (``pip download --no-deps bfcl-eval==V``), an
unpacked copy, an installed one (a ``site-packages`` folder), the ``bfcl_eval`` package folder
itself or a checkout's ``berkeley-function-call-leaderboard`` folder. It reads BFCL's layout as
data: the file prefix of the data files (``VERSION_PREFIX`` in ``constants/category_mapping.py``),
which module and function-doc file each API class has and which classes are stateless
(``constants/executable_backend_config.py``), all parsed without running them. A copy whose
layout differs (another version that moved or renamed them) is a ``BfclSourceError`` naming what
is missing.

``load_classes(names)`` imports the API classes from that copy: the copy's root goes on
``sys.path`` for the import only, and the ``bfcl_eval`` modules it loads are taken out of
``sys.modules`` afterwards (the classes keep working), so two copies never mix in one process and
nothing of BFCL stays importable. The classes' own imports must be installed where the run runs
(``MathAPI`` needs ``mpmath``: the project's ``bfcl`` extra). Imports nothing of the project.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import json
import re
import sys
import threading
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["CATEGORIES", "BfclSource", "BfclSourceError"]

PACKAGE = "bfcl_eval"
CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
"""BFCL's multi-turn categories (the ones its leaderboard's Multi Turn columns score)."""

_CONSTANTS = f"{PACKAGE}/constants"
_BACKEND_CONFIG = f"{_CONSTANTS}/executable_backend_config.py"
_CATEGORY_MAPPING = f"{_CONSTANTS}/category_mapping.py"
_DATA = f"{PACKAGE}/data"
_FUNC_DOCS = f"{_DATA}/multi_turn_func_doc"
_IMPORT_LOCK = threading.Lock()


class BfclSourceError(ValueError):
    """A path that is no usable copy of BFCL (its message says what is missing)."""


@dataclass
class BfclSource:
    """A copy of ``bfcl-eval`` (see the module docstring)."""

    path: Path
    """What the user gave, resolved: the wheel file, or the folder holding ``bfcl_eval/``."""
    version: str
    prefix: str
    """The data files' prefix (``BFCL_v4``)."""
    modules: dict[str, str]
    """API class -> its module (``bfcl_eval....func_source_code.gorilla_file_system``)."""
    docs: dict[str, str]
    """API class -> its function-doc file name under ``data/multi_turn_func_doc``."""
    stateless: frozenset[str]
    _zip: zipfile.ZipFile | None = field(default=None, repr=False)

    @classmethod
    def open(cls, given: str | Path) -> BfclSource:
        path = Path(given).expanduser()
        if not path.exists():
            raise BfclSourceError(f"{path}: no such file or folder")
        path = path.resolve()
        archive: zipfile.ZipFile | None = None
        if path.is_file():
            try:
                archive = zipfile.ZipFile(path)
            except (zipfile.BadZipFile, OSError) as e:
                raise BfclSourceError(f"{path}: not a wheel (a zip archive): {e}") from None
        else:
            path = _package_root(path)
        src = cls(path, "", "", {}, {}, frozenset(), archive)
        src._read_layout()
        return src

    # -- reading files --------------------------------------------------------------------------

    def exists(self, rel: str) -> bool:
        if self._zip is not None:
            return rel in self._zip.NameToInfo
        return (self.path / rel).is_file()

    def read_text(self, rel: str) -> str:
        try:
            if self._zip is not None:
                return self._zip.read(rel).decode("utf-8")
            return (self.path / rel).read_text(encoding="utf-8")
        except KeyError:
            raise BfclSourceError(f"{self.path}: has no {rel}") from None
        except (OSError, UnicodeDecodeError) as e:
            raise BfclSourceError(f"{self.path}: cannot read {rel}: {e}") from None

    def read_jsonl(self, rel: str) -> list[dict[str, Any]]:
        """A BFCL data file: one JSON object per line."""
        out = []
        for n, line in enumerate(self.read_text(rel).splitlines(), 1):
            if not line.strip():
                continue
            try:
                item = json.loads(line)
            except ValueError as e:
                raise BfclSourceError(f"{self.path}: {rel}:{n}: not JSON: {e}") from None
            if not isinstance(item, dict):
                raise BfclSourceError(f"{self.path}: {rel}:{n}: not a JSON object")
            out.append(item)
        return out

    def _names(self) -> list[str]:
        if self._zip is not None:
            return sorted(self._zip.NameToInfo)
        root = self.path
        return sorted(str(p.relative_to(root)) for p in (root / PACKAGE).rglob("*") if p.is_file())

    # -- the layout ------------------------------------------------------------------------------

    def _read_layout(self) -> None:
        for rel in (_CATEGORY_MAPPING, _BACKEND_CONFIG):
            if not self.exists(rel):
                raise BfclSourceError(
                    f"{self.path}: not BFCL's layout (no {rel}): give the bfcl-eval wheel, an "
                    "unpacked or installed copy"
                )
        mapping = _literals(self.read_text(_CATEGORY_MAPPING), _CATEGORY_MAPPING)
        config = _literals(self.read_text(_BACKEND_CONFIG), _BACKEND_CONFIG)
        prefix = mapping.get("VERSION_PREFIX")
        modules = config.get("CLASS_FILE_PATH_MAPPING")
        docs = config.get("MULTI_TURN_FUNC_DOC_FILE_MAPPING")
        stateless = config.get("STATELESS_CLASSES", [])
        if (
            not isinstance(prefix, str)
            or not isinstance(modules, dict)
            or not isinstance(docs, dict)
        ):
            raise BfclSourceError(
                f"{self.path}: a layout this version of the sandbox does not know "
                f"({_BACKEND_CONFIG} lacks CLASS_FILE_PATH_MAPPING or "
                f"MULTI_TURN_FUNC_DOC_FILE_MAPPING, or {_CATEGORY_MAPPING} VERSION_PREFIX)"
            )
        self.prefix = prefix
        self.modules = {str(k): str(v) for k, v in modules.items()}
        self.docs = {str(k): str(v) for k, v in docs.items()}
        self.stateless = frozenset(str(s) for s in stateless if isinstance(s, str))
        self.version = self._read_version()

    def _read_version(self) -> str:
        if self._zip is not None:
            match = re.match(r"bfcl_eval-([^-]+)-", self.path.name)
            if match:
                return match.group(1)
        for name in self._names() if self._zip is not None else _dist_infos(self.path):
            if name.endswith(".dist-info/METADATA"):
                text = self.read_text(name)
                for line in text.splitlines():
                    if line.startswith("Version:"):
                        return line.split(":", 1)[1].strip()
        return "unknown"

    def data_file(self, category: str, answers: bool = False) -> str:
        folder = f"{_DATA}/possible_answer" if answers else _DATA
        return f"{folder}/{self.prefix}_{category}.json"

    def module_file(self, cls: str) -> str:
        return self.modules[cls].replace(".", "/") + ".py"

    def doc_file(self, cls: str) -> str:
        return f"{_FUNC_DOCS}/{self.docs[cls]}"

    def check_class(self, cls: str) -> str | None:
        """Why ``cls`` cannot be loaded from this copy, or None."""
        if cls not in self.modules:
            known = ", ".join(sorted(self.modules))
            return f"unknown API class {cls!r} (this copy of BFCL has {known})"
        if cls not in self.docs:
            return f"API class {cls!r} has no function doc in this copy of BFCL"
        for rel in (self.module_file(cls), self.doc_file(cls)):
            if not self.exists(rel):
                return f"API class {cls!r}: this copy of BFCL has no {rel}"
        return None

    def function_docs(self, cls: str) -> list[dict[str, Any]]:
        return self.read_jsonl(self.doc_file(cls))

    def digest(self, classes: list[str]) -> str:
        """A digest of what decides the classes' behaviour: their modules' folder (every module
        there: they import each other), their function docs and the backend config."""
        h = hashlib.sha256()
        folders = sorted({self.module_file(c).rsplit("/", 1)[0] for c in classes})
        names = [n for n in self._names() if n.endswith(".py") and n.rsplit("/", 1)[0] in folders]
        names += sorted(self.doc_file(c) for c in classes) + [_BACKEND_CONFIG]
        for name in names:
            h.update(name.encode() + b"\0" + self.read_text(name).encode() + b"\0")
        return "sha256:" + h.hexdigest()[:32]

    # -- the classes -----------------------------------------------------------------------------

    def load_classes(self, names: list[str]) -> dict[str, type]:
        """The API classes ``names`` from this copy (see the module docstring)."""
        for name in names:
            problem = self.check_class(name)
            if problem is not None:
                raise BfclSourceError(problem)
        root = str(self.path)
        with _IMPORT_LOCK:
            saved = {k: v for k, v in sys.modules.items() if _ours(k)}
            for k in saved:
                del sys.modules[k]
            sys.path.insert(0, root)
            try:
                out: dict[str, type] = {}
                for name in names:
                    try:
                        module = importlib.import_module(self.modules[name])
                    except ImportError as e:
                        hint = " (install the project's bfcl extra)" if e.name == "mpmath" else ""
                        raise BfclSourceError(
                            f"API class {name!r} does not load: {type(e).__name__}: {e}{hint}"
                        ) from None
                    except Exception as e:
                        raise BfclSourceError(
                            f"API class {name!r} does not load: {type(e).__name__}: {e}"
                        ) from None
                    found = getattr(module, name, None)
                    if not isinstance(found, type):
                        raise BfclSourceError(
                            f"API class {name!r} is not defined in {self.module_file(name)}"
                        )
                    out[name] = found
                return out
            finally:
                sys.path.remove(root)
                for k in [k for k in sys.modules if _ours(k)]:
                    del sys.modules[k]
                sys.modules.update(saved)


def _ours(module: str) -> bool:
    return module == PACKAGE or module.startswith(PACKAGE + ".")


def _package_root(path: Path) -> Path:
    """The folder holding ``bfcl_eval/`` for a folder the user gave."""
    if path.name == PACKAGE and (path / "__init__.py").is_file():
        return path.parent
    if (path / PACKAGE).is_dir():
        return path
    raise BfclSourceError(
        f"{path}: no {PACKAGE}/ folder in it: give the bfcl-eval wheel, an unpacked or installed "
        "copy (the folder holding bfcl_eval/) or the bfcl_eval folder itself"
    )


def _dist_infos(root: Path) -> list[str]:
    return sorted(
        f"{p.parent.name}/METADATA"
        for p in root.glob(f"{PACKAGE}-*.dist-info/METADATA")
        if p.is_file()
    )


def _literals(text: str, where: str) -> dict[str, Any]:
    """The module-level assignments of ``text`` whose values are literals (f-strings made of
    literals and names assigned before included), parsed, never run."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise BfclSourceError(f"{where}: cannot parse: {e.msg} (line {e.lineno})") from None
    names: dict[str, Any] = {}
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        try:
            names[target.id] = _value(node.value, names)
        except ValueError:
            continue
    return names


def _value(node: ast.AST, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name) and node.id in names:
        return names[node.id]
    if isinstance(node, ast.JoinedStr):
        parts = []
        for v in node.values:
            if isinstance(v, ast.Constant):
                parts.append(str(v.value))
            elif isinstance(v, ast.FormattedValue) and v.format_spec is None and v.conversion == -1:
                parts.append(str(_value(v.value, names)))
            else:
                raise ValueError("not a literal")
        return "".join(parts)
    if isinstance(node, (ast.List, ast.Tuple)):
        return [_value(e, names) for e in node.elts]
    if isinstance(node, ast.Dict):
        out = {}
        for k, v in zip(node.keys, node.values, strict=True):
            if k is None:  # a ** unpacking
                raise ValueError("not a literal")
            out[_value(k, names)] = _value(v, names)
        return out
    raise ValueError("not a literal")
