"""ToolEyes' tool library -> a suite.

``Tool_Library/<Category>/<Subcategory>/config_gpt4.json`` is a list of OpenAI function schemas;
each subcategory file becomes one tool (named after the subcategory, category from the parent
folder), each function one API. ``Test_Data/scenario_data_raw.json`` (``query``, ``path``,
``scenario``) gives one task per query offering the APIs of the tool its ``path`` names; ToolEyes
ships no gold answers, so these tasks have no reference. The root is ToolEyes' folder (holding
``Tool_Library`` and ``Test_Data``) or its ``Tool_Library`` itself, whose sibling ``Test_Data`` is
then used. A suite without tasks cannot be run, so an import that finds no task is an error
that says why, and writes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mock_tools.models import ApiRef, ApiSpec, SuiteMeta, Task, ToolSpec
from sandbox.errors import SandboxError
from sandbox.interop.suite_writer import write_suite
from sandbox.interop.summary import ImportSummary
from sandbox.store.input_files import InputFileError, read_json

__all__ = ["import_tooleyes"]

CONFIG = "config_gpt4.json"
SCENARIOS = Path("Test_Data") / "scenario_data_raw.json"


def _api(fn: Any) -> ApiSpec:
    if not isinstance(fn, dict) or not isinstance(fn.get("name"), str):
        raise ValueError("not a function schema with a name")
    params = fn.get("parameters") or {"type": "object", "properties": {}}
    if not isinstance(params, dict):
        raise ValueError("parameters is not an object")
    return ApiSpec(
        name=fn["name"], description=str(fn.get("description") or ""), parameters=dict(params)
    )


def import_tooleyes(root: Path, out: Path, name: str | None = None) -> ImportSummary:
    library = root / "Tool_Library" if (root / "Tool_Library").is_dir() else root
    files = sorted(library.rglob(CONFIG))
    if not files:
        raise SandboxError(f"{root}: no Tool_Library/**/{CONFIG} here (is it ToolEyes' data?)")
    summary = ImportSummary(kind="tooleyes", out=str(out))
    tools: dict[str, list[ToolSpec]] = {}
    by_path: dict[str, str] = {}  # "<Category>/<Sub>" -> tool name
    names: set[str] = set()
    functions = 0
    for f in files:
        sub, category = f.parent.name, f.parent.parent.name
        tool_name = sub if sub not in names else f"{category}_{sub}"
        try:
            data = read_json(f)
        except InputFileError as e:  # not a regular file, not JSON, nested too deep
            summary.skip(str(f), f"malformed file: {e}")
            continue
        apis: dict[str, ApiSpec] = {}
        for i, fn in enumerate(data if isinstance(data, list) else []):
            functions += 1
            try:
                api = _api(fn)
            except (ValueError, ValidationError) as e:
                summary.skip(f"{f}[{i}]", f"malformed function: {e}")
                continue
            if api.name in apis:
                if apis[api.name] == api:
                    summary.skip(f"{f}[{i}]", f"duplicate: function {api.name!r} repeated")
                    continue
                # ToolEyes reuses a name for a different function: keep both, the later renamed
                n = 2
                while f"{api.name}_{n}" in apis:
                    n += 1
                api = api.model_copy(update={"name": f"{api.name}_{n}"})
                summary.notes.append(f"{f}: a second, different {fn['name']!r} is {api.name!r}")
            apis[api.name] = api
        if not apis:
            summary.skip(str(f), "malformed file: no function schemas")
            continue
        names.add(tool_name)
        by_path[f"{category}/{sub}"] = tool_name
        tools.setdefault(category, []).append(
            ToolSpec(name=tool_name, category=category, apis=list(apis.values()))
        )
    catalog = {t.name: t for specs in tools.values() for t in specs}
    queries = next(
        (b / SCENARIOS for b in (root, library.parent) if (b / SCENARIOS).is_file()), None
    )
    if queries is None:
        raise SandboxError(
            f"{root}: no {SCENARIOS} here or beside {library}: the tasks are ToolEyes' queries; "
            "give the ToolEyes folder that holds both Tool_Library and Test_Data"
        )
    tasks = _scenario_tasks(queries, by_path, catalog, summary)
    if not any(tasks.values()):
        reasons = "; ".join(list(dict.fromkeys(s.reason for s in summary.skipped))[:3])
        raise SandboxError(f"{queries}: no usable query, so no task ({reasons or 'no queries'})")
    meta = SuiteMeta(name=name or out.name, description=f"Imported from ToolEyes: {root}")
    summary.read = {
        "files": len(files),
        "functions": functions,
        "queries": sum(len(v) for v in tasks.values()),
    }
    summary.written = write_suite(out, meta, tools, tasks, {})
    return summary


def _scenario_tasks(
    path: Path, by_path: dict[str, str], catalog: dict[str, ToolSpec], summary: ImportSummary
) -> dict[str, list[Task]]:
    if not path.is_file():
        return {}
    try:
        data = read_json(path)
    except InputFileError as e:
        summary.skip(str(path), f"malformed scenario file: {e}")
        return {}
    tasks: dict[str, list[Task]] = {}
    for i, q in enumerate(data if isinstance(data, list) else []):
        if not isinstance(q, dict) or not isinstance(q.get("query"), str) or not q["query"].strip():
            summary.skip(f"{path.name}[{i}]", "malformed query: no text")
            continue
        parts = str(q.get("path") or "").strip("/").split("/")
        tool = by_path.get("/".join(parts[-2:]))
        if tool is None:
            summary.skip(f"{path.name}[{i}]", f"unknown tool: path {q.get('path')!r}")
            continue
        scenario = str(q.get("scenario") or "tooleyes")
        tasks.setdefault(scenario, []).append(
            Task(
                id=f"tooleyes-{i}",
                query=q["query"].strip(),
                tools=[ApiRef(tool=tool, api=a.name) for a in catalog[tool].apis],
                group=scenario,
                tags=["tooleyes", scenario],
            )
        )
    return tasks
