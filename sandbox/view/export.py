"""``export_static``: a self-contained copy of some runs' pages that opens from the file system.

::

    DIR/index.html                                 the runs
    DIR/leaderboard.html                           their leaderboard
    DIR/compare.html                               the runs side by side (two runs or more)
    DIR/runs/<run>/index.html                      each run, its plots beside it
    DIR/runs/<run>/episodes/<task>/<trial>.html    each episode
    DIR/runs.json                                  the index entries, for tools
    DIR/static/app.js, style.css

Every page carries its own data as JSON inside the HTML (no fetch, which browsers refuse on
``file://``); links are relative, names go through ``pages.safe_name``. The copy is written into
a fresh folder, or over an earlier export (a folder holding ``runs.json``); any other non-empty
folder is refused. May import the view modules.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from sandbox.errors import ConfigError
from sandbox.store.run_store import write_new
from sandbox.view.catalog import RunEntry
from sandbox.view.leaderboard import build_leaderboard
from sandbox.view.pages import STATIC_FILES, safe_name, shell, static_bytes
from sandbox.view.run_files import read_run_file
from sandbox.view.viewer import MAX_COMPARED, Viewer

__all__ = ["ExportSummary", "export_static"]

INDEX_FILE = "runs.json"


class ExportSummary(BaseModel):
    out: str
    runs: int
    episodes: int
    files: int


def _dump(value: Any) -> Any:
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, list):
        return [_dump(v) for v in value]
    return value


def _key_path(key: str) -> Path:
    return Path(*[safe_name(part) for part in key.split("/")])


class _Writer:
    def __init__(self, out: Path) -> None:
        self.out = out
        self.files = 0

    def page(self, rel: Path, name: str, title: str, params: dict[str, Any], data: Any) -> None:
        base = "../" * (len(rel.parts) - 1) or "./"
        text = shell(name, title=title, base=base, mode="static", params=params, data=_dump(data))
        self.write(rel, text)

    def write(self, rel: Path, text: str | bytes) -> None:
        path = self.out / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        write_new(path, text)  # a symlink left in the folder is replaced, not written through
        self.files += 1


EXPORTED = frozenset(
    {INDEX_FILE, "index.html", "leaderboard.html", "compare.html", "static", "runs"}
)
"""What an export writes at the top of its folder: a folder holding anything else is no earlier
export, and is never removed."""


def _prepare(out: Path) -> None:
    if out.exists() and not out.is_dir():
        raise ConfigError(f"--export {out}: a file is in the way; give a folder")
    if out.is_dir() and any(out.iterdir()):
        others = sorted(p.name for p in out.iterdir() if p.name not in EXPORTED)
        if not (out / INDEX_FILE).is_file() or others or out.is_symlink():
            held = f" (it holds {', '.join(others[:3])})" if others else ""
            raise ConfigError(
                f"--export {out}: the folder is not empty and holds no earlier export{held}; "
                "give a new or empty folder"
            )
        shutil.rmtree(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ConfigError(f"--export {out}: cannot create the folder: {e.strerror}") from e


def export_static(viewer: Viewer, keys: Sequence[str], out: str | Path) -> ExportSummary:
    """Write the pages of the runs ``keys`` (every readable run under the viewer's root when
    empty)."""
    entries: list[RunEntry] = [viewer.state(k).record.entry for k in keys] or [
        e for e in viewer.runs() if e.status != "unreadable"
    ]
    if not entries:
        raise ConfigError(f"nothing to export: no runs under {viewer.root}")
    out = Path(out)
    _prepare(out)
    w = _Writer(out)
    for name in STATIC_FILES:
        w.write(Path("static") / name, static_bytes(name))
    w.write(Path(INDEX_FILE), json.dumps(_dump(entries), indent=2, ensure_ascii=False) + "\n")
    w.page(Path("index.html"), "index", "Runs", {}, entries)
    episodes = 0
    for entry in entries:
        folder = Path("runs") / _key_path(entry.key)
        state = viewer.state(entry.key)
        rows = state.rows()
        page = state.page()
        for plot in page.plots:
            png = read_run_file(state.record.path, plot)  # a plot linked out is not copied
            if png is not None:
                w.write(folder / plot, png)
        w.page(
            folder / "index.html",
            "run",
            f"Run {entry.key}",
            {"key": entry.key},
            {
                "run": _dump(page),
                "episodes": _dump(rows),
            },
        )
        for task, trial in state.index.keys:
            ep = viewer.episode(entry.key, task, trial)
            rel = folder / "episodes" / safe_name(task) / f"{trial}.html"
            params = {"key": entry.key, "task": task, "trial": str(trial)}
            w.page(rel, "episode", f"{task} #{trial} - {entry.key}", params, ep)
            episodes += 1
    keys_all = [e.key for e in entries]
    board = build_leaderboard([viewer.state(k).record for k in keys_all])
    w.page(Path("leaderboard.html"), "leaderboard", "Leaderboard", {}, board)
    if len(entries) > 1:
        compared = keys_all[:MAX_COMPARED]
        params = {"runs": ",".join(compared)}
        w.page(Path("compare.html"), "compare", "Compare runs", params, viewer.compare(compared))
    return ExportSummary(out=str(out), runs=len(entries), episodes=episodes, files=w.files)
