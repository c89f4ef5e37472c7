"""Writing a suite folder fast: YAML through libyaml when available, recordings as JSONL.

Every importer builds models in memory and hands them to ``write_suite``; the folder it writes is
exactly what ``mock_tools.suite.load_suite`` reads (``suite.yaml``, ``tools/*.yaml``,
``tasks/*.yaml``, ``recordings/*.jsonl``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from mock_tools.models import Recording, SuiteMeta, Task, ToolSpec
from mock_tools.yaml_text import dump_yaml_text

__all__ = ["dump_yaml", "file_slug", "write_recordings", "write_suite"]

_SLUG = re.compile(r"[^A-Za-z0-9_.-]+")


def file_slug(name: str) -> str:
    """A file-name-safe form of a category, group or tool name (never empty)."""
    return _SLUG.sub("_", name).strip("._") or "unnamed"


def dump_yaml(data: Any, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    text = dump_yaml_text(data)
    path.write_text(text, encoding="utf-8")


def write_recordings(recordings: Iterable[Recording], path: Path) -> int:
    """Write recordings as JSONL (one per line); returns how many were written."""
    path.parent.mkdir(parents=True, exist_ok=True)
    n = 0
    with path.open("w", encoding="utf-8") as fh:
        for rec in recordings:
            fh.write(json.dumps(rec.model_dump(mode="json", exclude_none=True), ensure_ascii=False))
            fh.write("\n")
            n += 1
    return n


def write_suite(
    out: Path,
    meta: SuiteMeta,
    tools: Mapping[str, list[ToolSpec]],
    tasks: Mapping[str, list[Task]],
    recordings: Mapping[str, list[Recording]],
) -> dict[str, int]:
    """Write a suite folder. Each mapping is file stem -> the models stored in that file.

    Returns counts of what was written (``tools``, ``apis``, ``tasks``, ``recordings``).
    """
    out.mkdir(parents=True, exist_ok=True)
    dump_yaml(meta.model_dump(mode="json"), out / "suite.yaml")
    counts = {"tools": 0, "apis": 0, "tasks": 0, "recordings": 0}
    for stem, specs in tools.items():
        if specs:
            dump_yaml(
                [t.model_dump(mode="json", exclude_defaults=True) for t in specs],
                out / "tools" / f"{file_slug(stem)}.yaml",
            )
            counts["tools"] += len(specs)
            counts["apis"] += sum(len(t.apis) for t in specs)
    for stem, items in tasks.items():
        if items:
            dump_yaml(
                [t.model_dump(mode="json", exclude_defaults=True) for t in items],
                out / "tasks" / f"{file_slug(stem)}.yaml",
            )
            counts["tasks"] += len(items)
    for stem, recs in recordings.items():
        if recs:
            counts["recordings"] += write_recordings(recs, out / "recordings" / f"{stem}.jsonl")
    return counts
