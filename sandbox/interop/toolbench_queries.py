"""ToolBench / StableToolBench query files -> a suite (tools, APIs, tasks).

A query file is a JSON list of ``{query, query_id, api_list, "relevant APIs"}``. Each ``api_list``
entry documents one API (``category_name, tool_name, api_name, api_description,
required_parameters, optional_parameters, method, template_response``). Tools keep their original
names; each API is kept as the function ToolBench's client offers for it
(``sandbox.interop.toolbench_functions``): its ToolBench function name, description and
parameters (standardised names, ``NUMBER`` offered as ``integer``, defaults as ``example_value``,
never as a schema ``default``, which would be filled into every canonical key). An answer file
that offered the same API imports the same schema.

The suite is of ToolBench origin (``SuiteMeta.origin``): ToolBench's suffix dispatch and
ASCII-escaped observations, and a server that answers as StableToolBench's does.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from mock_tools.models import ApiRef, ApiSpec, Reference, SuiteMeta, Task, ToolSpec
from mock_tools.names import standardize
from sandbox.errors import ConfigError, SandboxError
from sandbox.interop.suite_writer import write_suite
from sandbox.interop.summary import ImportSummary
from sandbox.interop.toolbench_functions import kept_parameters, toolbench_function
from sandbox.store.input_files import InputFileError, read_json

__all__ = ["ToolCatalog", "import_queries", "task_group", "tool_categories", "toolbench_meta"]

_GROUP = re.compile(r"^(G\d+)")


def toolbench_meta(name: str, description: str) -> SuiteMeta:
    """The ``suite.yaml`` of every ToolBench / StableToolBench import: ToolBench's suffix
    dispatch, ASCII-escaped observations, ToolBench origin."""
    return SuiteMeta(
        name=name,
        description=description,
        dispatch="toolbench_suffix",
        ascii_observations=True,
        origin="toolbench",
    )


def api_from_entry(entry: dict[str, Any]) -> ApiSpec:
    """An ``ApiSpec`` from one ``api_list`` entry: ToolBench's function for it, under the API's
    own name; raises ``ValueError`` when malformed."""
    name = entry.get("api_name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("api_name missing")
    for kind in ("required_parameters", "optional_parameters"):
        params = entry.get(kind) or []
        if not isinstance(params, list):
            raise ValueError(f"{kind} is not a list")
        for p in params:
            if not isinstance(p, dict) or not isinstance(p.get("name"), str) or not p["name"]:
                raise ValueError(f"{kind} has an entry without a name")
    fn = toolbench_function(entry)
    template = entry.get("template_response")
    return ApiSpec(
        name=name,
        description=fn["description"],
        parameters=kept_parameters(fn["parameters"]),
        returns=json.dumps(template, ensure_ascii=False) if template else None,
        method=str(entry.get("method") or "GET").upper(),
        function=fn["name"],
    )


class ToolCatalog:
    """Tools and APIs merged across queries: the first documentation of an API wins."""

    def __init__(self) -> None:
        self.categories: dict[str, str] = {}
        self.apis: dict[str, dict[str, ApiSpec]] = {}
        self.conflicts = 0

    def add(self, tool: str, category: str, api: ApiSpec) -> None:
        self.categories.setdefault(tool, category)
        per_tool = self.apis.setdefault(tool, {})
        known = per_tool.get(api.name)
        if known is None:
            per_tool[api.name] = api
        elif known != api:
            self.conflicts += 1

    def recategorise(self, categories: dict[str, str]) -> int:
        """Put each tool named in ``categories`` in its category; returns how many were not."""
        for tool in self.categories:
            if tool in categories:
                self.categories[tool] = categories[tool]
        return sum(1 for tool in self.categories if tool not in categories)

    def has(self, tool: str, api: str) -> bool:
        return api in self.apis.get(tool, {})

    def by_category(self) -> dict[str, list[ToolSpec]]:
        out: dict[str, list[ToolSpec]] = {}
        for tool, apis in self.apis.items():
            category = self.categories[tool]
            spec = ToolSpec(name=tool, category=category, apis=list(apis.values()))
            out.setdefault(category, []).append(spec)
        return out


def task_group(stem: str) -> str:
    """``G1_instruction`` -> ``G1``; a name without a G-number is its own group."""
    m = _GROUP.match(stem)
    return m.group(1) if m else stem


def read_query_file(path: Path) -> list[Any]:
    if not path.exists() and not path.is_symlink():
        raise SandboxError(f"{path}: no such file")
    try:
        data = read_json(path)
    except InputFileError as e:  # not a regular file, not JSON, nested too deep
        raise SandboxError(f"not a JSON query file: {e}") from None
    if not isinstance(data, list):
        raise SandboxError(f"{path}: a query file is a JSON list of queries")
    return data


def tool_categories(files: list[Path]) -> dict[str, str]:
    """Standardised tool name -> its category, from query files' ``api_list`` entries (the first
    category wins for a name used in several)."""
    out: dict[str, str] = {}
    for path in files:
        for q in read_query_file(path):
            for entry in q.get("api_list") or [] if isinstance(q, dict) else []:
                if isinstance(entry, dict) and isinstance(entry.get("tool_name"), str):
                    category = str(entry.get("category_name") or "General")
                    out.setdefault(standardize(entry["tool_name"]), category)
    return out


def suite_tool_names(queries: list[Any]) -> dict[tuple[str, str], str]:
    """``(category, tool_name) -> suite tool name``.

    ToolBench identifies a tool by category and name; a suite by name alone. A name used in one
    category is kept as is; a name used in several (e.g. ``Currency Converter_v2`` in Finance and
    Financial) becomes ``<name> (<category>)`` in each, so no tool hides another.
    """
    categories: dict[str, set[str]] = {}
    for q in queries:
        for entry in q.get("api_list") or [] if isinstance(q, dict) else []:
            if isinstance(entry, dict) and isinstance(entry.get("tool_name"), str):
                category = str(entry.get("category_name") or "General")
                categories.setdefault(entry["tool_name"], set()).add(category)
    out: dict[tuple[str, str], str] = {}
    for tool, cats in categories.items():
        for category in cats:
            out[(category, tool)] = tool if len(cats) == 1 else f"{tool} ({category})"
    return out


def query_to_task(
    q: Any,
    stem: str,
    catalog: ToolCatalog,
    summary: ImportSummary,
    where: str,
    names: dict[tuple[str, str], str] | None = None,
) -> Task | None:
    """Add the query's APIs to ``catalog`` and return its task, or None (with a skip noted).

    ``names`` maps ``(category, tool_name)`` to the suite's tool name (see ``suite_tool_names``).
    """
    if not isinstance(q, dict):
        summary.skip(where, "malformed: entry is not an object")
        return None
    qid, query, api_list = q.get("query_id"), q.get("query"), q.get("api_list")
    if qid is None or not isinstance(query, str) or not query.strip():
        summary.skip(where, "malformed: query or query_id missing")
        return None
    if not isinstance(api_list, list) or not api_list:
        summary.skip(f"{where} (query_id {qid})", "malformed: empty api_list")
        return None
    offered: list[ApiRef] = []
    local: dict[str, str] = {}  # the query's own tool names -> suite names
    for i, entry in enumerate(api_list):
        try:
            if not isinstance(entry, dict):
                raise ValueError("not an object")
            tool = entry.get("tool_name")
            if not isinstance(tool, str) or not tool.strip():
                raise ValueError("tool_name missing")
            api = api_from_entry(entry)
        except (ValueError, ValidationError) as e:
            summary.skip(f"{where} (query_id {qid}) api_list[{i}]", f"malformed api: {e}")
            continue
        category = str(entry.get("category_name") or "General")
        suite_tool = (names or {}).get((category, tool), tool)
        local.setdefault(tool, suite_tool)
        catalog.add(suite_tool, category, api)
        ref = ApiRef(tool=suite_tool, api=api.name)
        if ref not in offered:
            offered.append(ref)
    if not offered:
        summary.skip(f"{where} (query_id {qid})", "malformed: no usable api in api_list")
        return None
    relevant: list[tuple[str, str]] = []
    for pair in q.get("relevant APIs") or []:
        if isinstance(pair, (list, tuple)) and len(pair) == 2:
            tool, api = pair
            if isinstance(tool, str) and isinstance(api, str):
                relevant.append((local.get(tool) or tool, api))
    return Task(
        id=f"{stem}-{qid}",
        query=query.strip(),
        tools=offered,
        group=task_group(stem),
        tags=["toolbench", stem],
        solvable=True,
        reference=Reference(relevant_apis=relevant),
    )


def import_queries(files: list[Path], out: Path, name: str | None = None) -> ImportSummary:
    """Import ToolBench/StableToolBench query files into the suite folder ``out``."""
    summary = ImportSummary(kind="toolbench-queries", out=str(out))
    catalog = ToolCatalog()
    tasks: dict[str, list[Task]] = {}
    seen_ids: set[str] = set()
    loaded = [(path, read_query_file(path)) for path in files]
    names = suite_tool_names([q for _, queries in loaded for q in queries])
    n_queries = 0
    for path, queries in loaded:
        stem = path.stem
        for i, q in enumerate(queries):
            n_queries += 1
            task = query_to_task(q, stem, catalog, summary, f"{path.name}[{i}]", names)
            if task is None:
                continue
            if task.id in seen_ids:
                summary.skip(f"{path.name}[{i}]", f"duplicate: task id {task.id} already imported")
                continue
            seen_ids.add(task.id)
            tasks.setdefault(stem, []).append(task)
    if not tasks:
        skips = summary.skipped
        first = f" (first: {skips[0].source}: {skips[0].reason})" if skips else ""
        raise ConfigError(
            f"no usable query in {', '.join(str(p) for p in files)}: {n_queries} read, "
            f"{len(skips)} skipped{first}; nothing written"
        )
    unresolved = sum(
        1
        for items in tasks.values()
        for t in items
        for tool, api in t.reference.apis()
        if not catalog.has(tool, api)
    )
    summary.read = {"files": len(files), "queries": n_queries}
    meta = toolbench_meta(
        name or out.name,
        f"Imported from ToolBench query files: {', '.join(p.name for p in files)}",
    )
    summary.written = write_suite(out, meta, catalog.by_category(), tasks, {})
    if catalog.conflicts:
        summary.notes.append(
            f"{catalog.conflicts} API docs differed between queries; the first one was kept"
        )
    if unresolved:
        summary.notes.append(f"{unresolved} relevant APIs are not in their query's api_list")
    summary.notes.append(
        "no recordings: import a response cache or answer trees to serve recorded responses"
    )
    return summary
