"""``--record-into SUITE_DIR``: what a live MCP server answered, written as a suite that replays.

``SuiteRecorder.open(root, catalog, tasks, source=...)`` makes ``root`` a suite folder (new or
existing) that the in-process mock tools can serve in place of the server:

- ``suite.yaml`` (kept when the suite exists), with the run's ``writes``/``reads`` when it is new;
- tool docs from the server's tool list (``ServerCatalog``): tools the suite does not define go to
  ``tools/mcp-<server>.yaml``; an API missing from a tool the suite already defines is added to
  that tool's file; an API the suite already documents keeps its docs;
- the run's tasks as offered on the server, in ``tasks/mcp-<server>.yaml`` (a task id the suite
  already defines elsewhere is left alone);
- every answer, as it comes, in ``recordings/mcp-<server>.jsonl``: one line per
  ``(tool, api, canonical arguments, write history, occurrence)``, appended and fsynced
  (``RecordingWriter``), with provenance ``upstream`` and the server in the note. The write
  history (``mock_tools.history``) is the episode's write calls before the call, when the server's
  tools (or the suite) say which write; absent otherwise. A call already recorded is not written
  again; when the server answers it differently, the first answer is kept and the conflict is
  counted (a replay of that episode will differ where the server did).

Files are replaced atomically; recordings only ever appended. May import ``mock_tools``,
``sandbox.errors`` and ``sandbox.tool_envs.mcp_catalog``.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import yaml

from mock_tools import (
    MockToolsError,
    Recording,
    RecordingWriter,
    Response,
    Task,
    canonical_key,
    load_suite,
)
from mock_tools.models import Provenance, SuiteMeta
from mock_tools.yaml_text import dump_yaml_text, load_yaml
from sandbox.errors import ConfigError
from sandbox.tool_envs.mcp_catalog import ServerCatalog

__all__ = ["RecordSummary", "SuiteRecorder"]

log = logging.getLogger(__name__)

Slot = tuple[str, str, str, str | None]


@dataclass
class RecordSummary:
    path: str
    written: int = 0
    known: int = 0
    conflicts: int = 0


class SuiteRecorder:
    """Appends live answers to a suite folder; thread-safe, first answer wins."""

    def __init__(
        self,
        root: Path,
        writer: RecordingWriter,
        schemas: dict[tuple[str, str], dict[str, Any]],
        recorded: dict[Slot, dict[int | None, Response]],
        note: str,
    ) -> None:
        self.root = root
        self._writer = writer
        self._schemas = schemas
        self._recorded = recorded
        self._note = note
        self._lock = threading.Lock()
        self.summary = RecordSummary(path=str(root))

    @classmethod
    def open(
        cls,
        root: str | Path,
        catalog: ServerCatalog,
        tasks: Iterable[Task],
        *,
        source: str,
        kinds: SuiteMeta | None = None,
    ) -> SuiteRecorder:
        """Write the docs and tasks into ``root`` (``ConfigError`` when it cannot) and open its
        recording file. A new ``suite.yaml`` takes ``kinds``' ``writes`` and ``reads``."""
        root = Path(root)
        stem = f"mcp-{catalog.server}"
        try:
            _write_meta(root, source, kinds)
            _merge_tools(root, stem, catalog)
            _merge_tasks(root, stem, list(tasks))
            suite = load_suite(root)
            writer = RecordingWriter(root / "recordings" / f"{stem}.jsonl")
        except (OSError, MockToolsError, yaml.YAMLError) as e:
            raise ConfigError(f"cannot record into {root}: {e}") from e
        schemas = {pair: spec.parameters for pair, spec in suite.apis.items()}
        recorded: dict[Slot, dict[int | None, Response]] = {}
        for rec in suite.recordings:
            key = canonical_key(rec.args, schemas.get((rec.tool, rec.api)))
            recorded.setdefault((rec.tool, rec.api, key, rec.history), {}).setdefault(
                rec.occurrence, rec.response
            )
        return cls(root, writer, schemas, recorded, f"recorded from the MCP server {source}")

    def record(
        self,
        tool: str,
        api: str,
        args: dict[str, Any],
        occurrence: int,
        response: Response,
        history: str | None = None,
    ) -> None:
        """Keep one answer, given after the write history ``history`` (blocking: fsyncs; call
        it from a worker thread in async code)."""
        key = canonical_key(args, self._schemas.get((tool, api)))
        with self._lock:
            known = self._recorded.setdefault((tool, api, key, history), {})
            earlier = known.get(occurrence, known.get(None))
            if earlier is not None:
                self.summary.known += 1
                if (earlier.ok, earlier.body, earlier.error) != (
                    response.ok,
                    response.body,
                    response.error,
                ):
                    self.summary.conflicts += 1
                    log.warning(
                        "%s/%s %s (occurrence %d%s) answered differently than its recording in "
                        "%s; the recording is kept",
                        tool,
                        api,
                        key,
                        occurrence,
                        f", after write history {history}" if history else "",
                        self.root,
                    )
                return
            known[occurrence] = response
            rec = Recording(
                tool=tool,
                api=api,
                args=args,
                occurrence=occurrence,
                response=response,
                provenance=Provenance(
                    source="upstream", recorded_at=datetime.now(timezone.utc), note=self._note
                ),
                history=history,
            )
            self._writer.append(rec)
            self.summary.written += 1

    def close(self) -> RecordSummary:
        self._writer.close()
        return self.summary


# -- the folder ----------------------------------------------------------------------------------


def _write_meta(root: Path, source: str, kinds: SuiteMeta | None) -> None:
    if (root / "suite.yaml").is_file():
        return
    if root.exists() and not root.is_dir():
        raise ConfigError(f"{root} is a file, not a suite folder")
    meta = SuiteMeta(
        name=root.resolve().name,
        description=f"Tools and answers recorded from the MCP server {source} by agent-sandbox.",
        writes=kinds.writes if kinds is not None else None,
        reads=kinds.reads if kinds is not None else None,
    )
    _write_yaml(root / "suite.yaml", meta.model_dump(mode="json", exclude_none=True))


def _merge_tools(root: Path, stem: str, catalog: ServerCatalog) -> None:
    """Add the catalog's tools and APIs the suite lacks (see the module docstring)."""
    ours = root / "tools" / f"{stem}.yaml"
    files: dict[Path, list[Any]] = {f: _docs(f) for f in sorted((root / "tools").glob("*.y*ml"))}
    files.setdefault(ours, [])
    defined: dict[str, tuple[Path, dict[str, Any]]] = {}
    for file, docs in files.items():
        for doc in docs:
            if isinstance(doc, dict) and isinstance(doc.get("name"), str):
                defined.setdefault(doc["name"], (file, doc))
    changed: set[Path] = set()
    for name, tool in catalog.tools.items():
        if name not in defined:
            doc = tool.model_dump(mode="json", exclude_defaults=True)
            files[ours].append(doc)
            defined[name] = (ours, doc)
            changed.add(ours)
            continue
        file, doc = defined[name]
        have = {a.get("name") for a in doc.get("apis") or [] if isinstance(a, dict)}
        for api in tool.apis:
            if api.name not in have:
                new = api.model_dump(mode="json", exclude_defaults=True)
                doc.setdefault("apis", []).append(new)
                changed.add(file)
    for file in sorted(changed):
        _write_yaml(file, files[file])


def _merge_tasks(root: Path, stem: str, tasks: list[Task]) -> None:
    ours = root / "tasks" / f"{stem}.yaml"
    elsewhere: set[str] = set()
    for file in sorted((root / "tasks").glob("*.y*ml")):
        if file != ours:
            elsewhere.update(
                doc["id"] for doc in _docs(file) if isinstance(doc, dict) and "id" in doc
            )
    by_id: dict[str, Any] = {}
    for doc in _docs(ours) if ours.is_file() else []:
        if isinstance(doc, dict) and "id" in doc:
            by_id[doc["id"]] = doc
    for task in tasks:
        if task.id not in elsewhere:
            by_id[task.id] = task.model_dump(mode="json", exclude_defaults=True)
    if by_id:
        _write_yaml(ours, list(by_id.values()))


def _docs(file: Path) -> list[Any]:
    data = load_yaml(file.read_text(encoding="utf-8"))
    if data is None:
        return []
    return data if isinstance(data, list) else [data]


def _write_yaml(path: Path, data: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    text = dump_yaml_text(data)
    with tmp.open("w", encoding="utf-8") as fh:
        fh.write(text)
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
