"""``RunConfig``: everything that decides what a run does, as the manifest records it.

A ``RunConfig`` is written verbatim into every run's ``manifest.json``, so a run can be resumed
(or re-run, replayed, forked) from its folder alone. Secrets never enter it: API keys are read
from the environment when the model is built. The agent is a strategy name plus its options
(validated by the strategy's options class, see ``agents.strategies``); the model is a name plus
options for its kind (``sandbox.models``). A ``preset`` (``agents.presets``) fills the options and
budgets the config leaves unset when the strategy and the budget are resolved; ``task_settings``
holds the few tasks whose options or budgets differ from the run's (an imported run's per-tree
settings). Manifests written before those fields existed are read through ``_upgrade``. May
import ``agents`` and ``mock_tools`` only.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    field_serializer,
    field_validator,
    model_validator,
)

from agents.budget import DEFAULT_MAX_MODEL_CALLS, Budget
from agents.presets import PRESETS, apply_preset
from agents.strategies import ResolvedStrategy, resolve_strategy
from mock_tools.miss import MISS_POLICIES
from mock_tools.models import FAULT_KINDS, FaultConfig
from sandbox.store.defaults import (
    DEFAULT_AGENT,
    DEFAULT_CONCURRENCY,
    DEFAULT_MODEL,
    DEFAULT_OUT,
    DEFAULT_SUITE,
)
from sandbox.store.redact import redact

__all__ = [
    "RUN_ID",
    "RunConfig",
    "TaskSettings",
    "check_run_id",
]


RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+=-]{0,127}$")
"""What a run id may be: a folder name, never a path (128 characters at most)."""


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is a safe folder name; ``ValueError`` saying what is wrong."""
    if not RUN_ID.match(run_id) or run_id in (".", ".."):
        raise ValueError(
            f"run id {run_id[:60]!r} is not a folder name: use letters, digits and . _ @ + = -, "
            "starting with a letter or digit, 128 characters at most"
        )
    return run_id


_LEGACY_AGENT_OPTIONS = ("width", "depth_unit", "max_observation_chars")
"""Top-level fields of older manifests that are agent options now."""


class TaskSettings(BaseModel):
    """What one task runs with where it differs from the run (given values replace the run's)."""

    model_config = ConfigDict(extra="forbid")

    agent_options: dict[str, Any] = Field(default_factory=dict)
    max_depth: int | None = Field(default=None, ge=1)
    max_model_calls: int | None = Field(default=None, ge=1)


class RunConfig(BaseModel):
    """Everything that decides what a run does. Stored in the manifest; secrets never are."""

    model_config = ConfigDict(extra="forbid")

    suite: str = Field(default=DEFAULT_SUITE, description="Path of the suite folder.")
    agent: str = Field(default=DEFAULT_AGENT, description="Strategy: react, dfsdt, react@N...")
    agent_options: dict[str, Any] = Field(
        default_factory=dict,
        description="Options of the strategy, validated by its options class (only those given).",
    )
    model: str = Field(default=DEFAULT_MODEL, description="Model alias or openai:<m>@<url>.")
    model_options: dict[str, Any] = Field(
        default_factory=dict, description="Options of the model's kind (e.g. a fork's prefix)."
    )
    seed: int = 0
    concurrency: int = Field(default=DEFAULT_CONCURRENCY, ge=1)
    trials: int = Field(default=1, ge=1, description="Episodes per task.")
    tasks: list[str] = Field(
        default_factory=list, description="Task ids or fnmatch globs; empty selects every task."
    )
    max_model_calls: int | None = Field(default=DEFAULT_MAX_MODEL_CALLS, ge=1)
    max_tool_calls: int | None = Field(default=None, ge=0)
    max_tokens: int | None = Field(default=None, ge=1)
    max_seconds: float | None = Field(default=None, gt=0)
    max_cost: float | None = Field(default=None, gt=0, description="USD per episode.")
    max_run_cost: float | None = Field(
        default=None, gt=0, description="USD per run: no episode starts once it is spent."
    )
    max_depth: int | None = Field(
        default=None, ge=1, description="Steps on one path (ReAct stops, DFSDT backtracks)."
    )
    out: str = Field(default=DEFAULT_OUT, description="Folder that receives run folders.")
    run_id: str | None = Field(default=None, description="Fixed run id (default: generated).")
    tools_url: str | None = Field(
        default=None, description="Base URL of a running mock_tools server (default: in-process)."
    )
    mcp_server: str | None = Field(
        default=None,
        description="An MCP server whose tools the agents use instead of the suite's mock tools: "
        "http(s)://HOST/mcp (streamable HTTP) or 'stdio:COMMAND ARGS'.",
    )
    record_into: str | None = Field(
        default=None,
        description="With mcp_server: a suite folder (new or existing) that receives the "
        "server's tool docs, the run's tasks and every answer, so the run replays offline.",
    )
    tools_replay: str | None = Field(
        default=None,
        description="A recorded run whose observations answer the tool calls: how a run whose "
        "tools were live (tools_url, mcp_server) replays without them.",
    )
    miss_policy: str = Field(default="error", description="What a call without a recording gets.")
    simulator: str | None = Field(
        default=None, description="Model that plays missing APIs (miss policy simulate)."
    )
    upstream_url: str | None = Field(
        default=None, description="Real API base URL (miss policy upstream)."
    )
    overlay: str | None = Field(
        default=None,
        description="SQLite file of responses made at run time (default: <suite>/overlay.sqlite).",
    )
    fault_rate: float | None = Field(default=None, ge=0.0, le=1.0)
    fault_seed: int | None = None
    model_cache: str | None = Field(
        default=None,
        description="SQLite file caching a remote model's answers by request (opt-in).",
    )
    executor: str = Field(
        default="local",
        description="Where episodes run: local (asyncio in this process) or ray (Ray tasks).",
    )
    ray_address: str | None = Field(
        default=None, description="With executor ray: the cluster (default: a local Ray)."
    )
    preset: str | None = Field(
        default=None,
        description="Preset whose values fill the agent options and budgets not set here "
        "(e.g. toolbench).",
    )
    recording_scope: str | None = Field(
        default=None,
        description="Recordings scope of the run's episodes: each episode's calls are answered "
        "by the suite's recordings scoped '<this>/<task id>' first (imported runs).",
    )
    task_settings: dict[str, TaskSettings] = Field(
        default_factory=dict,
        description="Per task id: agent options and budgets that differ from the run's.",
    )

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        if value is not None and value not in PRESETS:
            raise ValueError(f"unknown preset {value!r}; known: {', '.join(PRESETS.names())}")
        return value

    @field_serializer("model", "simulator", "tools_url", "upstream_url", "mcp_server")
    def _without_secrets(self, value: str | None) -> str | None:
        """What the manifest records: credentials in URLs are redacted (``sandbox.store.redact``);
        a resume is given them again (``--model``, ``--simulator``...)."""
        return None if value is None else redact(value)

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, value: str | None) -> str | None:
        return None if value is None else check_run_id(value)

    @field_validator("miss_policy")
    @classmethod
    def _known_policy(cls, value: str) -> str:
        if value not in MISS_POLICIES:
            raise ValueError(f"unknown miss policy {value!r}; known: {', '.join(MISS_POLICIES)}")
        return value

    @field_validator("mcp_server")
    @classmethod
    def _mcp_target(cls, value: str | None) -> str | None:
        if value is not None and not value.strip().startswith(("http://", "https://", "stdio:")):
            raise ValueError(
                f"{value!r} is not an MCP server: expected an http(s):// URL (streamable HTTP, "
                "e.g. http://127.0.0.1:8765/mcp) or 'stdio:COMMAND ARGS'"
            )
        return value

    @model_validator(mode="after")
    def _one_tool_source(self) -> RunConfig:
        if self.mcp_server and self.tools_url:
            raise ValueError("tools come from --tools-url or --mcp-server, not both")
        if self.tools_replay and (self.mcp_server or self.tools_url):
            raise ValueError("a replay's tools come from its recording, not a server")
        if self.record_into and not self.mcp_server:
            raise ValueError("--record-into records what an MCP server answers: add --mcp-server")
        if self.ray_address and self.executor != "ray":
            raise ValueError("--ray-address needs --executor ray")
        if self.record_into and self.executor != "local":
            raise ValueError(
                "--record-into writes one suite from one process: use --executor local"
            )
        return self

    def offline(self) -> RunConfig:
        """The config that re-runs this one without its live tools: an MCP run recorded into a
        suite reads that suite in process; any other run is returned as it is."""
        if not (self.mcp_server and self.record_into):
            return self
        return self.model_copy(
            update={"suite": self.record_into, "mcp_server": None, "record_into": None}
        )

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """Read older manifests: agent options as top-level fields, ``fork`` as a field."""
        if not isinstance(data, dict):
            return data
        data = dict(data)
        options = dict(data.get("agent_options") or {})
        for key in _LEGACY_AGENT_OPTIONS:
            if key in data:
                value = data.pop(key)
                if value is not None:
                    options.setdefault(key, value)
        if options:
            data["agent_options"] = options
        fork = data.pop("fork", None)
        if isinstance(fork, dict):
            data["model_options"] = {**fork, "then": data.get("model", DEFAULT_MODEL)}
            data["model"] = "fork"
        return data

    def strategy(self, task_id: str | None = None) -> ResolvedStrategy:
        """The agent strategy with its validated options (``AgentsError`` if invalid): the
        preset's values, then the run's options, then the task's own (``task_settings``)."""
        options = dict(self.agent_options)
        if self.preset is not None:
            options, _ = apply_preset(self.preset, self.agent, options, {})
        own = self.task_settings.get(task_id) if task_id is not None else None
        if own is not None:
            options.update(own.agent_options)
        return resolve_strategy(self.agent, options)

    def budget(self, task_id: str | None = None) -> Budget:
        """The budget: the run's fields, the preset's where the run sets none, the task's own."""
        values: dict[str, Any] = {
            "max_model_calls": self.max_model_calls,
            "max_tool_calls": self.max_tool_calls,
            "max_tokens": self.max_tokens,
            "max_seconds": self.max_seconds,
            "max_cost": self.max_cost,
            "max_depth": self.max_depth,
        }
        if self.preset is not None:
            given = {k: v for k, v in values.items() if v is not None}
            _, values = apply_preset(self.preset, self.agent, {}, given)
        own = self.task_settings.get(task_id) if task_id is not None else None
        if own is not None:
            values.update(own.model_dump(exclude={"agent_options"}, exclude_none=True))
        return Budget(**values)

    def run_faults(self) -> FaultConfig | None:
        """The run-wide fault settings, or None when no fault flag was given."""
        if self.fault_rate is None and self.fault_seed is None:
            return None
        return FaultConfig(
            rate=self.fault_rate or 0.0,
            kinds=list(FAULT_KINDS),
            seed=self.fault_seed if self.fault_seed is not None else self.seed,
        )
