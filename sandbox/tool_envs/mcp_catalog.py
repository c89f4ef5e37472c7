"""An MCP server's tool list as a suite catalog, and a run's tasks mapped onto it.

``ServerCatalog.from_tools(server_name, tools)`` gives every listed tool a suite ``(tool, api)``
whose function name (what agents see) is exactly the MCP tool's name:

- a tool of another mock tool server names its ``tool`` and ``api`` in ``_meta``: those;
- a name of ToolBench's form (``current_for_weather``): split back into ``("weather",
  "current")`` (``mock_tools.split_function_name``);
- any other name: the API of that name under a tool named after the server, with the name kept
  as the API's explicit ``function``.

Descriptions and input schemas are the server's; so is whether an API writes (``read_only``, from
the tool's annotations: ``readOnlyHint: true`` reads; ``readOnlyHint: false``, or a
``destructiveHint`` or ``idempotentHint`` without ``readOnlyHint: true`` (MCP gives those hints for
tools that are not read-only), writes; no such hint says nothing). ``catalog.task(task,
source_apis)`` is a task of the run (from a suite or a task file) as it is offered on this server:
the task's APIs matched by function name (every tool of the server when none match or the task lists
none), its reference path mapped the same way (dropped, answer kept, when a step is not on the
server), its checks and faults kept. May import ``mock_tools`` only.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from mock_tools import ApiSpec, Task, ToolSpec, function_name, split_function_name
from mock_tools.models import ApiRef, RefStep
from mock_tools.names import standardize

__all__ = ["ServerCatalog", "read_only"]

log = logging.getLogger(__name__)

META_TOOL = "agent-sandbox/tool"
META_API = "agent-sandbox/api"
Pair = tuple[str, str]


def read_only(tool: Any) -> bool | None:
    """Whether an MCP tool's annotations say it reads (True), writes (False), or neither."""
    hints = getattr(tool, "annotations", None)
    if hints is None:
        return None
    if hints.read_only_hint is not None:
        return bool(hints.read_only_hint)
    if hints.destructive_hint is not None or hints.idempotent_hint is not None:
        return False
    return None


@dataclass
class ServerCatalog:
    """The listed tools as suite APIs: ``apis`` by ``(tool, api)``, and the MCP name of each."""

    server: str
    tools: dict[str, ToolSpec] = field(default_factory=dict)
    apis: dict[Pair, ApiSpec] = field(default_factory=dict)
    mcp_names: dict[Pair, str] = field(default_factory=dict)
    by_name: dict[str, Pair] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)

    @classmethod
    def from_tools(cls, server_name: str, tools: Iterable[Any]) -> ServerCatalog:
        server = standardize(server_name) or "mcp_server"
        catalog = cls(server=server)
        for tool in tools:
            catalog._add(tool)
        return catalog

    def _add(self, tool: Any) -> None:
        name: str = tool.name
        if name in self.by_name:
            return
        meta = tool.meta or {}
        pair: Pair | None = None
        if isinstance(meta.get(META_TOOL), str) and isinstance(meta.get(META_API), str):
            pair = (meta[META_TOOL], meta[META_API])
        pair = pair or split_function_name(name) or (self.server, name)
        tool_name, api = pair
        n = 1
        while (tool_name, api) in self.apis:  # two names that land on one pair: keep both
            n += 1
            api = f"{pair[1]}_{n}"
        schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
        try:
            spec = ApiSpec(
                name=api,
                description=tool.description or "",
                parameters=dict(schema) or {"type": "object", "properties": {}},
                read_only=read_only(tool),
            )
        except ValidationError as e:
            log.warning("skipping MCP tool %r: %s", name, e.errors()[0]["msg"])
            self.skipped.append(name)
            return
        if function_name(tool_name, api) != name:
            spec.function = name
        self.apis[(tool_name, api)] = spec
        self.mcp_names[(tool_name, api)] = name
        self.by_name[name] = (tool_name, api)
        owner = self.tools.get(tool_name)
        if owner is None:
            self.tools[tool_name] = ToolSpec(
                name=tool_name, category=self.server, description="", apis=[spec]
            )
        else:
            owner.apis.append(spec)

    # -- tasks ------------------------------------------------------------------------------------

    def task(self, task: Task, source_apis: Mapping[Pair, ApiSpec]) -> Task:
        """``task`` as offered on this server (see the module docstring)."""
        offered = [p for p in self._pairs(task.tools, source_apis) if p is not None]
        if not offered:
            offered = list(self.apis)
        reference = task.reference
        steps = self._pairs(reference.steps, source_apis)
        relevant = None
        if reference.relevant_apis is not None:
            refs = [ApiRef(tool=t, api=a) for t, a in reference.relevant_apis]
            mapped = self._pairs(refs, source_apis)
            relevant = None if None in mapped else [p for p in mapped if p is not None]
        if None in steps:
            new_steps: list[RefStep] = []
        else:
            new_steps = [
                s.model_copy(update={"tool": p[0], "api": p[1]})
                for s, p in zip(reference.steps, steps, strict=True)
                if p is not None
            ]
        return task.model_copy(
            update={
                "tools": [ApiRef(tool=t, api=a) for t, a in dict.fromkeys(offered)],
                "reference": reference.model_copy(
                    update={"steps": new_steps, "relevant_apis": relevant}
                ),
            }
        )

    def _pairs(
        self, refs: Iterable[ApiRef | RefStep], source_apis: Mapping[Pair, ApiSpec]
    ) -> list[Pair | None]:
        """The catalog pair of each reference (by its function name in the source suite)."""
        out: list[Pair | None] = []
        for ref in refs:
            spec = source_apis.get((ref.tool, ref.api))
            name = (spec.function if spec is not None else None) or function_name(ref.tool, ref.api)
            out.append(self.by_name.get(name))
        return out
