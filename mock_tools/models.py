"""The suite format: pydantic models for tools, recordings, tasks and suites.

A suite is a folder::

    suite.yaml            SuiteMeta
    tools/*.yaml          one ToolSpec per file (or a list of them)
    recordings/*.jsonl    one Recording per line
    tasks/*.yaml          one Task per file (or a list of them)

A suite may declare a world (``SuiteMeta.world``: stateful tools written in Python, see
``mock_tools.worlds``); its tasks then say how their state starts and is checked (``Task.world``).
Everything a mock server or an evaluator needs is in these models; nothing here does I/O.
Imports the task side of worlds (``mock_tools.worlds.task``, pure pydantic) only.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from mock_tools.conversation import TaskUser
from mock_tools.worlds.task import TaskWorld

FaultKind = Literal["http_500", "rate_limit_429", "timeout", "malformed_body", "empty_body"]
FAULT_KINDS: tuple[FaultKind, ...] = get_args(FaultKind)
Source = Literal["hand", "toolbench", "stabletoolbench", "simulated", "upstream"]
DispatchRule = Literal["exact", "toolbench_suffix"]
"""How a client maps the function name a model wrote to an offered function (the same names as
``agents.toolenv.DispatchRule``, which implements them): ``exact``, or ToolBench's
``toolbench_suffix`` (the first offered function whose name ends with the name written)."""
Origin = Literal["toolbench"]
"""Where a suite comes from, when it is another benchmark's: ``toolbench`` for every suite a
ToolBench or StableToolBench importer writes."""


HISTORY_PATTERN = r"^[0-9a-f]{1,64}$"
"""What a write history's hash is made of (``Recording.history``): lower-case hex digits."""

TOOLBENCH_GROUPS = ("G1", "G2", "G3")
"""ToolBench's test groups; any other ``G<n>`` group is a typo."""
_G_NUMBER = re.compile(r"[Gg]\d+")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ApiSpec(_Strict):
    """One callable API of a tool (ToolBench: an endpoint of a RapidAPI tool)."""

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object", "properties": {}, "required": []},
        description="JSON Schema of the arguments object (OpenAI function-calling shape).",
    )
    returns: str | None = Field(default=None, description="Free-text doc of the response.")
    method: str = "POST"
    function: str | None = Field(
        default=None,
        description="The function name agents see (OpenAI tools, MCP tools); default ToolBench's "
        "``<api>_for_<tool>``. Set for APIs recorded from a server whose names have another form.",
    )
    read_only: bool | None = Field(
        default=None,
        description="Whether a call leaves the tool's state as it was (MCP's readOnlyHint): "
        "false makes the API a write, whose calls key the answers recorded after them (the "
        "write history, docs/mcp.md). None: not said (a read, unless the suite's writes/reads "
        "say otherwise).",
    )

    @field_validator("parameters")
    @classmethod
    def _object_schema(cls, v: dict[str, Any]) -> dict[str, Any]:
        if v.get("type", "object") != "object":
            raise ValueError("parameters must be a JSON Schema of type 'object'")
        v.setdefault("type", "object")
        v.setdefault("properties", {})
        return v


class ToolSpec(_Strict):
    """A tool groups APIs (ToolBench: category -> tool -> api)."""

    name: str = Field(min_length=1)
    description: str = ""
    category: str = "General"
    apis: list[ApiSpec] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_apis(self) -> ToolSpec:
        seen: set[str] = set()
        for api in self.apis:
            if api.name in seen:
                raise ValueError(f"duplicate api name {api.name!r} in tool {self.name!r}")
            seen.add(api.name)
        return self


class Provenance(_Strict):
    source: Source = "hand"
    recorded_at: datetime | None = None
    note: str = ""
    model: str | None = Field(default=None, description="The simulator model, when simulated.")


class Response(_Strict):
    """What a tool answers: a body on success, an error string otherwise."""

    ok: bool = True
    body: Any = None
    error: str = ""
    latency_ms: int = 0


class Recording(_Strict):
    """``(tool, api, canonical args[, occurrence]) -> response``.

    ``args`` is stored as given; the store canonicalises it against the API schema to build the
    key. ``occurrence`` (1-based) lets the nth identical call answer differently (state without
    code); a call beyond the last recorded occurrence gets the last one.
    """

    tool: str
    api: str
    args: dict[str, Any] = Field(default_factory=dict)
    occurrence: int | None = Field(default=None, ge=1)
    response: Response
    provenance: Provenance = Field(default_factory=Provenance)
    scope: str | None = Field(
        default=None,
        description="Serve this recording only to calls made in this recordings scope "
        "(``X-Sandbox-Recordings``; an imported episode's own responses, e.g. "
        "``DFS_woFilter_w2/G1-10``), before the unscoped ones. None: every call.",
    )
    history: str | None = Field(
        default=None,
        pattern=HISTORY_PATTERN,
        description="The write history the call was made after: the hash of the write calls "
        "its session had made, in order (``mock_tools.history``). Served only to a call made "
        "after the same writes. None: the empty history (no write before it; every recording "
        "of a suite without writes).",
    )


class FaultConfig(_Strict):
    """Deterministic fault injection: a fault is a pure function of the call, never a counter."""

    rate: float = Field(default=0.0, ge=0.0, le=1.0)
    kinds: list[FaultKind] = Field(default_factory=lambda: list(FAULT_KINDS))
    seed: int = 0


class RefStep(_Strict):
    """One step of a reference solution path."""

    thought: str = ""
    tool: str
    api: str
    args: dict[str, Any] = Field(default_factory=dict)
    turn: int = Field(
        default=0,
        ge=0,
        description="In a conversation: the turn the step belongs to (0: before the agent's "
        "first reply; n: after the user's n-th answer).",
    )
    function: str | None = Field(
        default=None,
        description="The function name the API is offered by, when it is not ToolBench's "
        "``<api>_for_<tool>`` (a world's tools are offered by their own names; the loader "
        "fills it in).",
    )
    by: Literal["agent", "user"] = Field(
        default="agent",
        description="Who makes the call: ``user`` for a call of the user's own tool (dual "
        "control: made by the user, when the agent asks, in the turn it belongs to). Gold "
        "replays make it; the agent is never expected to.",
    )

    @property
    def offered_name(self) -> str:
        """The function name an agent calls this step by."""
        from mock_tools.names import function_name

        return self.function or function_name(self.tool, self.api)


class Reference(_Strict):
    steps: list[RefStep] = Field(default_factory=list)
    answer: str = Field(default="", description="The reference final answer.")
    replies: list[str] = Field(
        default_factory=list,
        description="In a conversation: the reference's reply at the end of each turn but the "
        "last (whose reply is ``answer``).",
    )
    relevant_apis: list[tuple[str, str]] | None = Field(
        default=None,
        description="(tool, api) pairs that solve the task; defaults to the steps' APIs.",
    )

    def apis(self) -> list[tuple[str, str]]:
        if self.relevant_apis is not None:
            return [tuple(p) for p in self.relevant_apis]  # type: ignore[misc]
        return [(s.tool, s.api) for s in self.steps if s.by == "agent"]

    @property
    def agent_steps(self) -> list[RefStep]:
        """The steps the agent makes (a user's calls of its own tools left out)."""
        return [s for s in self.steps if s.by == "agent"]


class Check(_Strict):
    """A deterministic answer check. ``kind`` selects which fields matter.

    - ``contains``: ``value`` must appear in the answer (case-insensitive unless ``case``).
    - ``not_contains``: ``value`` must not appear.
    - ``regex``: ``pattern`` must match somewhere in the answer.
    - ``number``: some number in the answer is within ``tolerance`` of ``value``.
    - ``any_of``: at least one of ``values`` appears.
    """

    kind: Literal["contains", "not_contains", "regex", "number", "any_of"]
    value: str | float | None = None
    values: list[str] | None = None
    pattern: str | None = None
    tolerance: float = 0.0
    case: bool = False

    @model_validator(mode="after")
    def _well_formed(self) -> Check:
        if self.kind in ("contains", "not_contains") and not isinstance(self.value, str):
            raise ValueError(f"check {self.kind!r} needs a string 'value'")
        if self.kind == "number" and not isinstance(self.value, (int, float)):
            raise ValueError("check 'number' needs a numeric 'value'")
        if self.kind == "any_of" and not self.values:
            raise ValueError("check 'any_of' needs a non-empty 'values' list")
        if self.kind == "regex":
            if not self.pattern:
                raise ValueError("check 'regex' needs a 'pattern'")
            try:
                re.compile(self.pattern)
            except re.error as e:
                raise ValueError(f"invalid regex {self.pattern!r}: {e}") from e
        return self


class ApiRef(_Strict):
    tool: str
    api: str


class Task(_Strict):
    """A scenario: a query, the APIs offered, a reference path and deterministic checks."""

    id: str = Field(min_length=1)
    query: str = Field(min_length=1)
    tools: list[ApiRef] = Field(
        default_factory=list,
        description="The APIs offered to the agent (``validate`` requires at least one in a suite; "
        "a task file for an MCP run may leave it empty: every tool the server lists).",
    )
    group: str = Field(
        default="G1",
        description="ToolBench's test group (G1, G2, G3), or a group name of the suite's own "
        "that is not of the form G<n> (a ToolEyes scenario); scores are reported per group.",
    )
    tags: list[str] = Field(default_factory=list)
    solvable: bool = True
    reference: Reference = Field(default_factory=Reference)
    checks: list[Check] = Field(default_factory=list)
    faults: FaultConfig | None = None
    user: TaskUser | None = Field(
        default=None,
        description="A conversation: the user's script or persona (docs/conversations.md).",
    )
    world: TaskWorld | None = Field(
        default=None,
        description="In a suite with a world: the task's initial state (a patch of the base "
        "state), frozen clock and state checks (docs/worlds.md). The gold actions are the "
        "reference steps.",
    )

    @field_validator("group")
    @classmethod
    def _known_group(cls, v: str) -> str:
        if not v.strip():
            raise ValueError("group must not be empty")
        if _G_NUMBER.fullmatch(v) and v not in TOOLBENCH_GROUPS:
            raise ValueError(
                f"group {v!r}: ToolBench's groups are {', '.join(TOOLBENCH_GROUPS)} (a name "
                "that is not of the form G<n> is a group of the suite's own)"
            )
        return v


class WorldAdapter(_Strict):
    """A world made by an adapter over another benchmark's code, loaded from the user's copy of
    it at run time (``kind: bfcl``: BFCL's API classes, ``mock_tools.worlds.bfcl``)."""

    kind: Literal["bfcl"]
    source: str = Field(
        min_length=1,
        description="The copy the code is loaded from (bfcl: the bfcl-eval wheel, an unpacked or "
        "installed copy); a relative path is relative to the suite folder.",
    )
    classes: list[str] = Field(min_length=1, description="The API classes the tasks involve.")
    version: str = Field(default="", description="The copy's version at import (checked).")
    digest: str = Field(
        default="", description="A digest of the copy's API code and docs at import (checked)."
    )


class SuiteMeta(_Strict):
    name: str
    version: str = "1"
    description: str = ""
    defaults: dict[str, Any] = Field(
        default_factory=dict,
        description="Episode limits a run uses where neither it nor its preset sets them "
        "(max_depth, max_model_calls...: agents.Budget's fields; a BFCL import sets max_depth "
        "to BFCL's steps per turn).",
    )
    dispatch: DispatchRule = Field(
        default="exact",
        description="How agents map a called name to an offered function (imported ToolBench "
        "and StableToolBench suites: toolbench_suffix).",
    )
    ascii_observations: bool = Field(
        default=False,
        description="Render observations with non-ASCII characters escaped, as ToolBench's "
        "json.dumps does (imported ToolBench suites).",
    )
    world: str | None = Field(
        default=None,
        description="The suite's world: a file of the suite (world.py[:Class]), a module path "
        "(package.module:Class) or an entry point of group agent_sandbox.worlds "
        "(docs/worlds.md). Its tools join the suite's, its state is the suite's state/ folder.",
    )
    world_adapter: WorldAdapter | None = Field(
        default=None,
        description="Instead of world: a world made by an adapter over another benchmark's "
        "code (bfcl: BFCL's API classes; docs/benchmarks.md).",
    )
    world_call_seconds: float = Field(
        default=10.0, gt=0, description="The longest a world tool call may run."
    )
    writes: list[str] | None = Field(
        default=None,
        description="APIs whose calls change what later calls answer (a recorded stateful "
        "system): tool/api, tool/* or a function name. Every other API is a read unless its "
        "tool doc says read_only: false. Answers are then recorded and served by the write "
        "history before them (docs/mcp.md).",
    )
    reads: list[str] | None = Field(
        default=None,
        description="APIs whose calls change nothing (same forms as writes); with reads given, "
        "every API not listed and not read_only: true is a write.",
    )
    origin: Origin | None = Field(
        default=None,
        description="toolbench: imported from ToolBench or StableToolBench. Its APIs are offered "
        "as ToolBench offers them (their schemas are ToolBench's), and its server answers as "
        "StableToolBench's does: /virtual and the native route take arguments that fail the "
        "schema as unrecorded calls (the miss policy answers) instead of rejecting them.",
    )
