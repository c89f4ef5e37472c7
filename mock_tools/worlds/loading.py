"""Loading a suite's world: its code (a file of the suite, a module path or an entry point) and
its base state (the files of ``state/``).

``suite.yaml`` names the world with ``world:``::

    world: world.py:Shop          # a file of the suite folder, and the class in it
    world: world.py               # the file's one World subclass
    world: my_worlds.shop:Shop    # a module importable where the run runs
    world: shop                   # an entry point of group ``agent_sandbox.worlds``

The base state is every file of the suite's ``state/`` folder, one collection per file named by
the file's stem: ``*.yaml`` / ``*.yml`` / ``*.json`` holding a mapping ``id -> record`` or a list
of records with an ``id`` field, or ``*.jsonl`` with one record (with an ``id``) per line. A
world's code is a file of the suite, so it is part of the suite's fingerprint (every ``*.py``
of the suite's top folder is), as ``state/`` is. Errors are ``WorldDefinitionError``s naming the
file (and line). Imports the worlds' engine, state and errors, and the suite's YAML reader.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

from mock_tools.errors import MockToolsError
from mock_tools.models import WorldAdapter
from mock_tools.worlds.errors import WorldDefinitionError
from mock_tools.worlds.state import State, StateError
from mock_tools.worlds.world import World, WorldEngine
from mock_tools.yaml_text import MAX_YAML_BYTES, load_yaml

__all__ = [
    "ENTRY_POINT_GROUP",
    "STATE_FOLDER",
    "load_adapter",
    "load_engine",
    "load_state",
    "world_class",
]

ENTRY_POINT_GROUP = "agent_sandbox.worlds"
STATE_FOLDER = "state"
_MODULE_PATH = re.compile(r"^[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*$")
_STATE_SUFFIXES = (".yaml", ".yml", ".json", ".jsonl")


def load_engine(spec: str, root: Path | None) -> WorldEngine:
    """The world ``spec`` names (see the module docstring), with the base state of ``root``'s
    ``state/`` folder."""
    cls, source = world_class(spec, root)
    base = load_state(root / STATE_FOLDER) if root is not None else State.empty()
    return cls.make_engine(base, source)


def load_adapter(adapter: WorldAdapter, root: Path | None) -> WorldEngine:
    """The world an adapter makes (``SuiteMeta.world_adapter``): for ``bfcl``, BFCL's API
    classes loaded from the user's copy (``mock_tools.worlds.bfcl``)."""
    from mock_tools.worlds.bfcl.engine import load_bfcl_engine

    source = Path(adapter.source).expanduser()
    if not source.is_absolute() and root is not None:
        source = root / source
    where = str(root / "suite.yaml") if root is not None else "suite.yaml"
    return load_bfcl_engine(
        str(source),
        adapter.classes,
        version=adapter.version,
        digest=adapter.digest,
        where=where,
    )


def world_class(spec: str, root: Path | None) -> tuple[type[World], str]:
    """The ``World`` subclass ``spec`` names and where it is defined."""
    file_part, _, name = spec.partition(":")
    if file_part.endswith(".py"):
        if root is None:
            raise WorldDefinitionError(f"world {spec!r} is a file: it needs a suite folder")
        return _from_file(root / file_part, name or None)
    if _MODULE_PATH.match(spec):
        module_name, _, attr = spec.partition(":")
        try:
            module = importlib.import_module(module_name)
        except Exception as e:
            raise WorldDefinitionError(
                f"world {spec!r}: cannot import {module_name}: {type(e).__name__}: {e}"
            ) from None
        return _pick(module, attr, spec), _where(module, attr)
    return _from_entry_point(spec)


def _from_file(path: Path, name: str | None) -> tuple[type[World], str]:
    if not path.is_file():
        raise WorldDefinitionError("no such world file", str(path))
    digest = hashlib.sha256(str(path.resolve()).encode() + path.read_bytes()).hexdigest()[:16]
    module_name = f"_sandbox_world_{digest}"
    module = sys.modules.get(module_name)
    if module is None:
        loader_spec = importlib.util.spec_from_file_location(module_name, path)
        if loader_spec is None or loader_spec.loader is None:
            raise WorldDefinitionError("cannot load this file as Python", str(path))
        module = importlib.util.module_from_spec(loader_spec)
        sys.modules[module_name] = module
        try:
            loader_spec.loader.exec_module(module)
        except SyntaxError as e:
            sys.modules.pop(module_name, None)
            raise WorldDefinitionError(f"syntax error: {e.msg}", f"{path}:{e.lineno}") from None
        except Exception as e:
            sys.modules.pop(module_name, None)
            line = _error_line(e, path)
            raise WorldDefinitionError(
                f"the world does not load: {type(e).__name__}: {e}", line
            ) from None
    if name:
        return _pick(module, name, str(path)), f"{path}:{_line(getattr(module, name, None))}"
    found = [
        v
        for v in vars(module).values()
        if isinstance(v, type)
        and issubclass(v, World)
        and v is not World
        and v.__module__ == module_name
    ]
    if len(found) != 1:
        what = "no World subclass" if not found else f"{len(found)} World subclasses"
        raise WorldDefinitionError(f"{what}: name the class (world: {path.name}:Name)", str(path))
    return found[0], f"{path}:{_line(found[0])}"


def _pick(module: Any, name: str, spec: str) -> type[World]:
    value = getattr(module, name, None)
    if not (isinstance(value, type) and issubclass(value, World)):
        what = "nothing" if value is None else type(value).__name__
        raise WorldDefinitionError(f"world {spec!r}: {name} is {what}, not a World subclass")
    return value


def _from_entry_point(name: str) -> tuple[type[World], str]:
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name.lower() == name.lower():
            try:
                value = ep.load()
            except Exception as e:
                raise WorldDefinitionError(
                    f"world {name!r} (entry point {ep.value}) does not load: "
                    f"{type(e).__name__}: {e}"
                ) from None
            if not (isinstance(value, type) and issubclass(value, World)):
                raise WorldDefinitionError(
                    f"world {name!r} (entry point {ep.value}) is not a World subclass"
                )
            return value, ep.value
    raise WorldDefinitionError(
        f"unknown world {name!r}: not a file of the suite (world.py:Name), a module path "
        f"(package.module:Name) or an entry point of group {ENTRY_POINT_GROUP}"
    )


def _line(obj: Any) -> int | str:
    try:
        return inspect.getsourcelines(obj)[1]
    except (OSError, TypeError):
        return "?"


def _where(module: Any, attr: str) -> str:
    file = getattr(module, "__file__", None) or module.__name__
    return f"{file}:{_line(getattr(module, attr, None))}"


def _error_line(e: BaseException, path: Path) -> str:
    tb = e.__traceback__
    line = None
    while tb is not None:
        if Path(tb.tb_frame.f_code.co_filename) == path:
            line = tb.tb_lineno
        tb = tb.tb_next
    return f"{path}:{line}" if line else str(path)


# -- the base state -------------------------------------------------------------------------


def load_state(folder: Path) -> State:
    """The collections of ``folder`` (see the module docstring); empty when there is none."""
    if not folder.is_dir():
        return State.empty()
    docs: dict[str, dict[str, Any]] = {}
    for f in sorted(folder.iterdir()):
        if f.suffix not in _STATE_SUFFIXES or f.name.startswith("."):
            continue
        if not f.is_file():
            raise WorldDefinitionError("cannot read: not a regular file", str(f))
        if f.stem in docs:
            raise WorldDefinitionError(f"collection {f.stem!r} is given by two files", str(f))
        docs[f.stem] = _collection(f)
    try:
        return State.from_documents(docs)
    except StateError as e:
        raise WorldDefinitionError(f"the base state: {e}", str(folder)) from None


def _collection(f: Path) -> dict[str, Any]:
    size = f.stat().st_size
    if f.suffix in (".yaml", ".yml") and size > MAX_YAML_BYTES:
        raise WorldDefinitionError(
            f"YAML file of {size:,} bytes, over {MAX_YAML_BYTES:,}: write large collections "
            "as .json or .jsonl",
            str(f),
        )
    try:
        text = f.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise WorldDefinitionError(f"cannot read: {e}", str(f)) from None
    if f.suffix == ".jsonl":
        records = []
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except (ValueError, RecursionError) as e:
                raise WorldDefinitionError(f"not JSON: {e}", f"{f}:{lineno}") from None
        return _by_id(records, f)
    try:
        data = json.loads(text) if f.suffix == ".json" else load_yaml(text)
    except (ValueError, RecursionError, MockToolsError) as e:
        raise WorldDefinitionError(f"cannot read: {e}", str(f)) from None
    except Exception as e:  # YAML's own errors
        raise WorldDefinitionError(f"invalid YAML: {e}", str(f)) from None
    if data is None:
        return {}
    if isinstance(data, list):
        return _by_id(data, f)
    if isinstance(data, dict):
        return {str(k): v for k, v in data.items()}
    raise WorldDefinitionError(
        "a collection is a mapping id -> record or a list of records with an 'id'", str(f)
    )


def _by_id(records: list[Any], f: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for i, record in enumerate(records):
        rid = record.get("id") if isinstance(record, dict) else None
        if not isinstance(rid, (str, int)) or isinstance(rid, bool) or rid == "":
            raise WorldDefinitionError(f"record {i + 1} has no 'id' (a string)", str(f))
        key = str(rid)
        if key in out:
            raise WorldDefinitionError(f"id {key!r} is used twice", str(f))
        out[key] = record
    return out
