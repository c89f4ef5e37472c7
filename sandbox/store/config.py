"""``RunConfig``: everything that decides what a run does, as the manifest records it.

A ``RunConfig`` is written verbatim into every run's ``manifest.json``, so a run can be resumed
(or re-run, replayed, forked) from its folder alone. Secrets never enter it: API keys are read
from the environment when the model is built. The agent is a strategy name plus its options
(validated by the strategy's options class, see ``agents.strategies``); the model is a name plus
options for its kind (``sandbox.models``). Manifests written before those two fields existed are
read through ``_upgrade``. May import ``agents`` and ``mock_tools`` only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agents.budget import DEFAULT_MAX_MODEL_CALLS, Budget
from agents.strategies import ResolvedStrategy, resolve_strategy
from mock_tools.miss import MISS_POLICIES
from mock_tools.models import FAULT_KINDS, FaultConfig

__all__ = [
    "DEFAULT_AGENT",
    "DEFAULT_CONCURRENCY",
    "DEFAULT_MODEL",
    "DEFAULT_OUT",
    "DEFAULT_SUITE",
    "RunConfig",
]

DEFAULT_SUITE = "scenarios/default"
DEFAULT_AGENT = "react"
DEFAULT_MODEL = "noisy-reference"
DEFAULT_OUT = "runs"
DEFAULT_CONCURRENCY = 4

_LEGACY_AGENT_OPTIONS = ("width", "depth_unit", "max_observation_chars")
"""Top-level fields of older manifests that are agent options now."""


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
    max_cost: float | None = Field(default=None, gt=0)
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
    miss_policy: str = Field(default="error", description="What a call without a recording gets.")
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

    def strategy(self) -> ResolvedStrategy:
        """The agent strategy with its validated options (``AgentsError`` if invalid)."""
        return resolve_strategy(self.agent, self.agent_options)

    def budget(self) -> Budget:
        return Budget(
            max_model_calls=self.max_model_calls,
            max_tool_calls=self.max_tool_calls,
            max_tokens=self.max_tokens,
            max_seconds=self.max_seconds,
            max_cost=self.max_cost,
            max_depth=self.max_depth,
        )

    def run_faults(self) -> FaultConfig | None:
        """The run-wide fault settings, or None when no fault flag was given."""
        if self.fault_rate is None and self.fault_seed is None:
            return None
        return FaultConfig(
            rate=self.fault_rate or 0.0,
            kinds=list(FAULT_KINDS),
            seed=self.fault_seed if self.fault_seed is not None else self.seed,
        )
