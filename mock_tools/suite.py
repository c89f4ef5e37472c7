"""Loading a suite folder into memory, with errors that name the file and the field.

Bad files are ``SuiteError``s naming the file (and line): invalid YAML or JSON, a key written
twice in one YAML mapping, YAML over a limit (``yaml_size``, ``yaml_expansion``:
``mock_tools.yaml_text``; the size is checked before the file is read), text that is not UTF-8,
numbers too long to read, nesting too deep, a duplicate tool name or task id, and an entry of
``tools/``, ``tasks/`` or ``recordings/`` that cannot be read as a file (a symlink loop, a
dangling link, a folder named like a file). This is what every command that reads a suite
loads; ``mock_tools.validate.load_valid_suite`` adds the checks ``validate`` makes, for the
commands that use the suite (run, serve). Imports ``mock_tools.models``, ``history``,
``recording_index``, ``suite_cache``, ``yaml_text`` and ``errors`` only.
"""

from __future__ import annotations

import errno
import gc
import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml
from pydantic import BaseModel, ValidationError

from mock_tools.errors import SuiteError, limit_message
from mock_tools.history import api_kinds
from mock_tools.models import ApiRef, ApiSpec, Recording, SuiteMeta, Task, ToolSpec
from mock_tools.recording_index import (
    IndexedRecordings,
    LineError,
    decode_line,
    open_index,
)
from mock_tools.suite_cache import SuiteDocs, cached_docs, store_docs
from mock_tools.yaml_text import MAX_YAML_BYTES, YamlLimitExceeded, load_yaml

if TYPE_CHECKING:
    from mock_tools.worlds.world import WorldEngine


@dataclass
class Suite:
    """A loaded suite. ``apis`` is keyed by ``(tool, api)``."""

    meta: SuiteMeta
    tools: dict[str, ToolSpec]
    tasks: list[Task]
    recordings: Sequence[Recording]
    """A list, or for a loaded suite folder an ``IndexedRecordings`` decoding lines on demand."""
    path: Path | None = None
    fingerprint: str = ""
    apis: dict[tuple[str, str], ApiSpec] = field(default_factory=dict)
    task_file: bool = False
    """Loaded from a task file (``load_task_file``): tasks only, for a run on an MCP server."""
    world: WorldEngine | None = None
    """The suite's world (``SuiteMeta.world``), its tools among ``tools``."""

    def __post_init__(self) -> None:
        if not self.apis:
            self.apis = {(t.name, a.name): a for t in self.tools.values() for a in t.apis}

    @property
    def name(self) -> str:
        return self.meta.name

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def api(self, tool: str, api: str) -> ApiSpec | None:
        return self.apis.get((tool, api))


def load_suite(path: str | Path, *, cache_dir: str | Path | None = None) -> Suite:
    """Load and validate a suite folder, or a task file (``load_task_file``). Raises
    ``SuiteError`` naming the file and field (see ``_load_suite``). The cyclic collector is
    paused meanwhile (the models of thousands of tasks hold no cycles; its passes over them
    were half of a cached load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_suite(path, cache_dir=cache_dir)
    finally:
        if enabled:
            gc.enable()


def _load_suite(path: str | Path, *, cache_dir: str | Path | None = None) -> Suite:
    """Load and validate a suite folder, or a task file (``load_task_file``). Raises
    ``SuiteError`` naming the file and field.

    Recordings are not decoded: ``recordings`` reads them through the suite's compact index
    (``mock_tools.recording_index``), built on first load and cached by fingerprint (beside the
    suite, else in ``cache_dir``). Each recording is fully validated when it is read. The YAML
    documents are cached the same way (``mock_tools.suite_cache``): a suite loaded before is
    validated from them, without parsing YAML."""
    root = Path(path)
    if root.is_file() and root.suffix in TASK_FILE_SUFFIXES:
        return load_task_file(root)
    if not root.is_dir():
        raise SuiteError("no such suite folder", file=str(root))
    meta_file = root / "suite.yaml"
    if not meta_file.is_file():
        raise SuiteError("missing suite.yaml (a suite folder needs one)", file=str(root))
    try:
        digest: str | None = fingerprint(root)
    except OSError:  # an unreadable file: reading the YAML says which (as it always did)
        digest = None
    cached = cached_docs(root, digest, cache_dir) if digest else None
    docs = _Documents(root, cached)
    meta = _model(SuiteMeta, docs.meta(), meta_file)

    _check_entries(root)
    tools: dict[str, ToolSpec] = {}
    for f, file_docs in docs.files("tools"):
        for i, doc in file_docs:
            tool = _model(ToolSpec, doc, f, i)
            if tool.name in tools:
                raise SuiteError(f"duplicate tool name {tool.name!r}", file=str(f), field="name")
            tools[tool.name] = tool

    tasks: list[Task] = []
    task_files: dict[str, Path] = {}
    for f, file_docs in docs.files("tasks"):
        for i, doc in file_docs:
            task = _model(Task, doc, f, i)
            if task.id in task_files:
                raise SuiteError(
                    f"duplicate task id {task.id!r} (also in {task_files[task.id]})",
                    file=str(f),
                    field=f"[{i}].id" if i is not None else "id",
                )
            task_files[task.id] = f
            tasks.append(task)

    world = None
    if meta.world is not None or meta.world_adapter is not None:
        world, tasks = _with_world(root, meta, tools, tasks)
    _check_kinds(meta, tools, meta_file)

    if digest is None:
        digest = fingerprint(root)
    if cached is None:
        store_docs(root, digest, cache_dir, docs.read)
    schemas = {(t.name, a.name): a.parameters for t in tools.values() for a in t.apis}
    recordings = IndexedRecordings(open_index(root, digest, schemas, cache_dir=cache_dir))
    return Suite(
        meta=meta,
        tools=tools,
        tasks=tasks,
        recordings=recordings,
        path=root,
        fingerprint=digest,
        world=world,
    )


def _check_kinds(meta: SuiteMeta, tools: dict[str, ToolSpec], meta_file: Path) -> None:
    """The suite's ``writes`` and ``reads`` name its APIs (``mock_tools.history``)."""
    if meta.writes is None and meta.reads is None:
        return
    try:
        api_kinds(meta, {(t.name, a.name): a for t in tools.values() for a in t.apis})
    except ValueError as e:
        field, _, message = str(e).partition(": ")
        if field not in ("writes", "reads"):
            field, message = "writes", str(e)
        raise SuiteError(message, file=str(meta_file), field=field) from None


def _with_world(
    root: Path, meta: SuiteMeta, tools: dict[str, ToolSpec], tasks: list[Task]
) -> tuple[WorldEngine, list[Task]]:
    """Load the suite's world (``world``, or an adapter's): its tools join ``tools``; a task
    that offers no tools is offered every tool of the world."""
    from mock_tools.worlds.loading import load_adapter, load_engine  # only where it is used

    where = str(root / "suite.yaml")
    if meta.world is not None and meta.world_adapter is not None:
        raise SuiteError("give world or world_adapter, not both", file=where)
    if meta.world_adapter is not None:
        world = load_adapter(meta.world_adapter, root)
    else:
        assert meta.world is not None
        world = load_engine(meta.world, root)
    if world.name in tools:
        raise SuiteError(
            f"the world's name {world.name!r} is also a tool of tools/",
            file=str(root / "suite.yaml"),
        )
    tools[world.name] = world.tool_spec()
    every = [ApiRef(tool=world.name, api=name) for name in world.tools]
    return world, [_world_task(t, world.name, every) for t in tasks]


def _world_task(task: Task, world: str, every: list[ApiRef]) -> Task:
    """A task of a world suite: offered every tool of the world when it names none; its
    reference steps on the world called by the tools' own names."""
    update: dict[str, Any] = {}
    if not task.tools:
        update["tools"] = every
    if any(s.tool == world and s.function is None for s in task.reference.steps):
        steps = [
            s.model_copy(update={"function": s.api})
            if s.tool == world and s.function is None
            else s
            for s in task.reference.steps
        ]
        update["reference"] = task.reference.model_copy(update={"steps": steps})
    return task.model_copy(update=update) if update else task


class _Documents:
    """The documents of a suite's YAML files: from the cache of its fingerprint when there is
    one (``mock_tools.suite_cache``), else read from the files and kept in ``read``."""

    def __init__(self, root: Path, cached: SuiteDocs | None) -> None:
        self.root = root
        self.cached = cached
        self.read: SuiteDocs = {"meta": None, "tools": [], "tasks": []}

    def meta(self) -> Any:
        if self.cached is not None:
            return self.cached["meta"]
        self.read["meta"] = _yaml(self.root / "suite.yaml")
        return self.read["meta"]

    def files(self, folder: str) -> Iterator[tuple[Path, list[tuple[int | None, Any]]]]:
        """Each ``*.y*ml`` file of ``folder`` in name order, with its documents."""
        if self.cached is not None:
            for name, docs in self.cached[folder]:
                yield self.root / folder / name, [(i, doc) for i, doc in docs]
            return
        for f in sorted((self.root / folder).glob("*.y*ml")):
            docs = _docs(f)
            self.read[folder].append([f.name, [[i, doc] for i, doc in docs]])
            yield f, docs


TASK_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def load_task_file(path: str | Path) -> Suite:
    """A suite of tasks only, from one YAML (or JSON) file: a list, or ``{tasks: [...]}``, whose
    items are tasks or bare query strings. A task's ``id`` defaults to ``q<n>`` (its position) and
    its ``tools`` to none (on an MCP server: every tool it lists). Such a suite has no tools and
    no recordings: it is for runs on an MCP server (``sandbox run --mcp-server``)."""
    file = Path(path)
    data = _yaml(file)
    if isinstance(data, dict) and "tasks" in data:
        data = data["tasks"]
    if not isinstance(data, list):
        raise SuiteError("expected a list of tasks (or of query strings)", file=str(file))
    tasks: list[Task] = []
    for i, item in enumerate(data):
        doc = {"query": item} if isinstance(item, str) else item
        if isinstance(doc, dict):
            doc = {"id": f"q{i + 1}", **doc}
        tasks.append(_model(Task, doc, file, i))
    seen: set[str] = set()
    for i, task in enumerate(tasks):
        if task.id in seen:
            raise SuiteError(
                f"task id {task.id!r} is used twice", file=str(file), field=f"[{i}].id"
            )
        seen.add(task.id)
    return Suite(
        meta=SuiteMeta(name=file.stem, description=f"tasks of {file.name}"),
        tools={},
        tasks=tasks,
        recordings=[],
        path=file,
        fingerprint="sha256:" + hashlib.sha256(file.read_bytes()).hexdigest(),
        task_file=True,
    )


def iter_recordings(folder: Path) -> Iterator[Recording]:
    """Every recording of every ``*.jsonl`` file in a folder, in file then line order."""
    for f in sorted(folder.glob("*.jsonl")) if folder.is_dir() else []:
        with f.open("rb") as fh:
            for lineno, raw in enumerate(fh, 1):
                where = f"{f}:{lineno}"
                if not raw.strip():
                    continue
                try:
                    data = decode_line(raw)
                except LineError as e:
                    raise SuiteError(e.message, file=where) from None
                yield _model(Recording, data, where)


def fingerprint(root: Path) -> str:
    """sha256 over the suite's files (relative path and bytes), in sorted order."""
    h = hashlib.sha256()
    for f in sorted(p for p in _files(root) if _is_suite_file(root, p)):
        h.update(f.relative_to(root).as_posix().encode())
        h.update(b"\0")
        with f.open("rb") as fh:  # in blocks: a suite's recordings can be large
            while block := fh.read(1 << 20):
                h.update(block)
        h.update(b"\0")
    return "sha256:" + h.hexdigest()


_SUITE_PARTS = ("suite.yaml", "tools", "tasks", "recordings", "state")
"""What a suite's fingerprint covers, besides the ``*.py`` files of its top folder (a world's
code)."""


def _files(root: Path) -> list[Path]:
    """Every file under ``root``, through symlinked folders too (a suite may link its
    recordings from elsewhere), each real folder once (a link back up is not a loop)."""
    seen: set[str] = set()
    found: list[Path] = []
    for folder, dirs, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            dirs.clear()
            continue
        seen.add(real)
        if folder == str(root):  # only the suite's own folders (not .cache, runs, overlays)
            dirs[:] = [d for d in dirs if d in _SUITE_PARTS]
        found.extend(Path(folder, name) for name in files if os.path.isfile(Path(folder, name)))
    return found


def _is_suite_file(root: Path, p: Path) -> bool:
    rel = p.relative_to(root).parts
    if len(rel) == 1 and rel[0].endswith(".py"):
        return True
    return rel[0] in _SUITE_PARTS and "__pycache__" not in rel


_ENTRIES = (("tools", "*.y*ml"), ("tasks", "*.y*ml"), ("recordings", "*.jsonl"))
"""The files a suite folder is made of (besides ``suite.yaml``)."""


def _check_entries(root: Path) -> None:
    """A ``SuiteError`` for an entry the loader would read that is not a readable file: a
    symlink loop or a dangling link would otherwise be skipped without a word."""
    for folder, pattern in _ENTRIES:
        for f in sorted((root / folder).glob(pattern)):
            if f.is_file():
                continue
            if f.is_symlink():
                try:
                    f.resolve(strict=True)
                    why = "a symlink to something that is not a file"
                except RuntimeError:
                    why = "a symlink loop"
                except OSError as e:
                    why = "a symlink loop" if e.errno == errno.ELOOP else "a dangling symlink"
            else:
                why = "not a file"
            raise SuiteError(f"cannot read: {why}", file=str(f))


def _yaml(f: Path) -> Any:
    try:
        size = f.stat().st_size
    except OSError as e:
        raise SuiteError(f"cannot read: {e.strerror}", file=str(f)) from e
    if size > MAX_YAML_BYTES:
        raise SuiteError(
            f"YAML file of {size:,} bytes, over {MAX_YAML_BYTES:,} (limit yaml_size)", file=str(f)
        )
    try:
        text = f.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        line = f.read_bytes()[: e.start].count(b"\n") + 1
        raise SuiteError(
            f"not UTF-8 text ({e.reason} at byte {e.start})", file=f"{f}:{line}"
        ) from None
    except OSError as e:
        raise SuiteError(f"cannot read: {e.strerror}", file=str(f)) from e
    try:
        return load_yaml(text)
    except YamlLimitExceeded as e:
        raise SuiteError(e.message, file=f"{f}:{e.line}" if e.line else str(f)) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark
        where = f"{f}:{mark.line + 1}" if mark is not None else str(f)
        raise SuiteError(f"invalid YAML: {e.problem or e}", file=where) from e
    except yaml.reader.ReaderError as e:  # a character YAML does not allow
        line = text[: e.position].count("\n") + 1
        what = f" (#x{ord(e.character):04x})" if isinstance(e.character, str) else ""
        raise SuiteError(f"invalid YAML: {e.reason}{what}", file=f"{f}:{line}") from None
    except yaml.YAMLError as e:
        raise SuiteError(f"invalid YAML: {e}", file=str(f)) from e
    except (RecursionError, ValueError) as e:
        raise SuiteError(f"unreadable YAML: {limit_message(e)}", file=str(f)) from e


def _docs(f: Path) -> list[tuple[int | None, Any]]:
    data = _yaml(f)
    if isinstance(data, list):
        return list(enumerate(data))
    return [(None, data)]


def _model(cls: type[BaseModel], data: Any, f: Path | str, index: int | None = None) -> Any:
    if not isinstance(data, dict):
        raise SuiteError(f"expected a mapping for {cls.__name__}", file=str(f))
    try:
        return cls.model_validate(data)
    except ValidationError as e:
        err = e.errors()[0]
        parts, msg = list(err["loc"]), err["msg"]
        if parts[-1:] == ["[key]"] and (err["input"] is None or isinstance(err["input"], bool)):
            # pydantic places a key it refuses as its index; YAML made it a boolean or null
            read = json.dumps(err["input"])
            parts = [*parts[:-2], "[key]"]
            msg = (
                f"a key YAML read as {read}, not as text: an unquoted on, off, yes, no, true, "
                'false, null or ~ is one; quote it ("on": ...)'
            )
        loc = ".".join(str(x) for x in parts)
        if index is not None:
            loc = f"[{index}].{loc}" if loc else f"[{index}]"
        more = f" (and {len(e.errors()) - 1} more)" if len(e.errors()) > 1 else ""
        raise SuiteError(msg + more, file=str(f), field=loc or None) from e
