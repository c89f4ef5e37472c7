"""``RunConfig``: everything that decides what a run does, as the manifest records it.

A ``RunConfig`` is written verbatim into every run's ``manifest.json``, so a run can be resumed
(or re-run, replayed, forked) from its folder alone; saved as YAML it is a config file that
``sandbox run --config`` runs again. It is made of sections, one pydantic model per thing, each
field with its description (the command line's flags, their help and the tables of
docs/cli.md are made from them, ``sandbox.commands.settings_flags``):

==============  ===================================================================================
section         holds
==============  ===================================================================================
(top)           ``suite``, ``seed``, ``trials``, ``tasks``, ``preset``, ``task_settings``
``agent``       the strategy's ``name`` and its ``options`` (validated by its options class)
``model``       the model's ``name``, the ``options`` of its kind, its request ``cache``
``budget``      the episode limits (``agents.budget.Budget``'s fields) and ``max_run_cost``
``tools``       where tools come from (``url``, ``mcp_server``, ``replay``, ``transport``...) and
                how the in-process server answers (``miss_policy``, ``miss_options``, faults...)
``executor``    where episodes run (``name``, its ``options``, ``ray_address``) and how many
                at once
``eval``        the scoring at the end of the run: what it draws (``plots``), its ``judge``
``output``      where the run folder goes (``out``, ``run_id``, ``compress``) and what is printed
                (``json_line``)
==============  ===================================================================================

Secrets never enter a record: API keys are read from the environment when a model is built, and
settings marked ``SECRET`` (URLs that may carry credentials) are recorded redacted. A
``preset`` (``agents.presets``) fills the options and budgets the config leaves unset when the
strategy and the budget are resolved; ``task_settings`` holds the few tasks whose options or
budgets differ from the run's (an imported run's per-tree settings). Manifests written before
the sections existed (flat fields), or before agent options were a field, are read through
``_upgrade``. May import ``agents`` and ``mock_tools`` only.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)
from typing_extensions import Self

from agents.budget import Budget
from agents.model import MAX_REPLY_BYTES
from agents.presets import PRESETS, apply_preset
from agents.strategies import ResolvedStrategy, resolve_strategy
from mock_tools.errors import MockToolsError
from mock_tools.miss import miss_policy_kind, miss_policy_options
from mock_tools.models import FAULT_KINDS, FaultConfig
from sandbox.store.config_upgrade import upgrade_flat
from sandbox.store.defaults import (
    DEFAULT_AGENT,
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_TOOL_REPLY,
    DEFAULT_MODEL,
    DEFAULT_OUT,
    DEFAULT_SUITE,
)
from sandbox.store.paths import read_regular_file, usable_file_path
from sandbox.store.setting import (
    Flag,
    OptionalSecretText,
    SecretOptions,
    SecretText,
    with_values,
)

__all__ = [
    "RECORDED",
    "RUN_ID",
    "AgentConfig",
    "BudgetConfig",
    "EvalConfig",
    "ExecutorConfig",
    "ModelConfig",
    "OutputConfig",
    "RunConfig",
    "TaskSettings",
    "ToolsConfig",
    "check_run_id",
]


RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+=-]{0,127}$")
"""What a run id may be: a folder name, never a path (128 characters at most)."""


def check_run_id(run_id: str) -> str:
    """``run_id`` when it is a safe folder name; ``ValueError`` saying what is wrong."""
    if not RUN_ID.match(run_id):  # "." and ".." do not start with a letter or digit
        raise ValueError(
            f"run id {run_id[:60]!r} is not a folder name: use letters, digits and . _ @ + = -, "
            "starting with a letter or digit, 128 characters at most"
        )
    return run_id


_SECTION = ConfigDict(extra="forbid", defer_build=True)

RECORDED = {"recorded": True}
"""The validation context of a config read back from a manifest: its miss policy is not looked
up (a plugin's may not be installed where the run is read); it is when the run runs again."""


def _checked(info: ValidationInfo) -> bool:
    return not (isinstance(info.context, dict) and info.context.get("recorded"))


class TaskSettings(BaseModel):
    """What one task runs with where it differs from the run (given values replace the run's)."""

    model_config = ConfigDict(extra="forbid")

    agent_options: dict[str, Any] = Field(default_factory=dict)
    max_depth: int | None = Field(default=None, ge=1)
    max_model_calls: int | None = Field(default=None, ge=1)


MAX_PROMPT_BYTES = 2**20
"""The longest system prompt file read (1 MiB): a prompt is sent with every model call and kept
in the manifest and every trajectory."""


def read_prompt_file(path: str, *, missing_ok: bool = False) -> str | None:
    """The text of a prompt file (``ValueError`` naming the problem in one line); None when it
    is missing and ``missing_ok``. Only a regular file of at most ``MAX_PROMPT_BYTES`` is read
    (``/dev/zero`` would never end)."""
    try:
        data = read_regular_file(path, MAX_PROMPT_BYTES)
    except FileNotFoundError:
        if missing_ok:
            return None
        raise ValueError(f"no such file {path!r}") from None
    except OSError as e:
        raise ValueError(f"cannot read {path!r}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path!r} is not UTF-8 text") from None
    if not text.strip():
        raise ValueError(f"{path!r} is empty")
    return text


class AgentConfig(BaseModel):
    """The strategy that drives the model (``agents.strategies``) and its options."""

    model_config = _SECTION

    name: Annotated[str, Flag(metavar="AGENT", registry="agents.strategies:STRATEGIES")] = Field(
        default=DEFAULT_AGENT, description="The strategy (`make run` passes dfsdt)."
    )
    options: Annotated[SecretOptions, Flag(short="-O")] = Field(
        default_factory=dict,
        description="Any option of the strategy, those of strategies registered by your own code "
        "included (VALUE is JSON, else text); the strategy's options class validates them, and "
        "only those given are recorded.",
    )
    system_prompt_file: Annotated[str | None, Flag(metavar="PATH")] = Field(
        default=None,
        description="A UTF-8 file whose text is the system prompt (e.g. ToolBench's own, which "
        "the project does not ship); read once, its text becomes the option system_prompt and "
        "the manifest records its SHA-256. A regular file of at most 1 MiB (MAX_PROMPT_BYTES).",
    )

    @model_validator(mode="after")
    def _read_system_prompt_file(self, info: ValidationInfo) -> AgentConfig:
        """The file's text as the ``system_prompt`` option. A config that already holds the
        text (a printed config) keeps it; the file must then say the same. A manifest's config
        (``RECORDED``) holds the text the run used, whatever the file says now."""
        if self.system_prompt_file is None:
            return self
        if not _checked(info) and "system_prompt" in self.options:
            return self
        try:
            text = read_prompt_file(
                self.system_prompt_file, missing_ok="system_prompt" in self.options
            )
        except ValueError as e:
            raise ValueError(f"system_prompt_file: {e}") from None
        given = self.options.get("system_prompt")
        if text is not None and given is not None and given != text:
            raise ValueError(
                f"system_prompt_file {self.system_prompt_file!r} does not hold the system prompt "
                "this config gives (two prompts given, or the file changed since the run "
                "recorded it): give one"
            )
        if given is None:
            self.options = {**self.options, "system_prompt": text}
        return self


class ModelConfig(BaseModel):
    """The model the agent talks to (``sandbox.models``)."""

    model_config = _SECTION

    name: Annotated[SecretText, Flag(metavar="MODEL")] = Field(
        default=DEFAULT_MODEL,
        description="An alias of models.yaml (qwen-7b, gpt-4o-mini, reference, "
        "noisy-reference[:RATE], explorer...), replay:<run>, or openai:<model>@<base_url>.",
    )
    options: SecretOptions = Field(
        default_factory=dict,
        description="Options of the model's kind, e.g. a fork's prefix (VALUE is JSON, else text); "
        "an offline kind refuses one it does not read (noisy-reference takes rate).",
    )
    cache: Annotated[str | None, Flag(name="--model-cache", metavar="PATH")] = Field(
        default=None,
        description="SQLite cache of a remote model's answers keyed by the full request: a "
        "re-run makes no repeated call.",
    )
    max_reply_bytes: Annotated[int, Flag(metavar="BYTES")] = Field(
        default=MAX_REPLY_BYTES,
        ge=1,
        description="The longest reply (a completion's body, in bytes) a remote model may send; "
        "a longer one ends the episode as model_error:reply_too_large, counted unsolved "
        "(docs/reliability.md).",
    )

    @field_validator("cache")
    @classmethod
    def _cache_file(cls, value: str | None, info: ValidationInfo) -> str | None:
        return usable_file_path(value) if _checked(info) else value


class BudgetConfig(Budget):
    """The limits of each episode (running out ends it as budget_exhausted), and of the run."""

    model_config = _SECTION
    FLAGS: ClassVar[dict[str, Flag]] = {
        "max_seconds": Flag(metavar="S"),
        "max_cost": Flag(metavar="USD"),
        "max_depth": Flag(metavar="D"),
    }

    max_run_cost: Annotated[float | None, Flag(metavar="USD")] = Field(
        default=None,
        gt=0,
        description="Model cost of the run in USD: no episode starts once it is spent; the run "
        "ends stopped, and `--resume RUN --max-run-cost MORE` goes on.",
    )

    def episode_budget(self) -> Budget:
        """The per-episode limits, as the agents take them."""
        return Budget(**self.model_dump(include=set(Budget.model_fields)))


class ToolsConfig(BaseModel):
    """Where the agents' tools come from, and how the in-process mock tool server answers."""

    model_config = _SECTION

    url: Annotated[OptionalSecretText, Flag(name="--tools-url", metavar="URL")] = Field(
        default=None,
        description="A running mock_tools server instead of the in-process one; each episode "
        "sends its own X-Sandbox-Session, so its occurrence counts are its own even when runs "
        "share the server.",
    )
    mcp_server: Annotated[OptionalSecretText, Flag(metavar="URL|stdio:CMD")] = Field(
        default=None,
        description="Run on the tools an MCP server lists: http(s)://HOST/mcp (streamable HTTP) "
        "or 'stdio:COMMAND ARGS'; the suite may then be a task file of queries (docs/mcp.md).",
    )
    accept_other_suite: bool = Field(
        default=False,
        description="Run even when the tool server (--tools-url, or an MCP server that is a "
        "mock tool server) serves another suite, or another version of it, than --suite; "
        "without it such a run stops before its first episode. The manifest records what the "
        "server said.",
    )
    record_into: Annotated[str | None, Flag(metavar="SUITE_DIR")] = Field(
        default=None,
        description="With an MCP server: a suite folder (new or existing) that receives the "
        "server's tool docs, the run's tasks and every answer, so replays and later runs work "
        "offline.",
    )
    max_reply_bytes: Annotated[int, Flag(name="--max-tool-reply-bytes", metavar="BYTES")] = Field(
        default=DEFAULT_MAX_TOOL_REPLY,
        ge=1,
        description="The longest answer (in bytes) a tool may send through --tools-url, an MCP "
        "server or an external agent's own REST call; past it the answer is not read and the "
        "call fails with fault:reply_too_large, which the agent observes (docs/reliability.md).",
    )
    replay: Annotated[str | None, Flag(name="--tools-replay", metavar="RUN")] = Field(
        default=None,
        description="A recorded run whose observations answer the tool calls: how a run whose "
        "tools were live (a tools URL, an MCP server) replays without them.",
    )
    miss_policy: Annotated[
        str, Flag(metavar="POLICY", registry="mock_tools.miss:MISS_POLICIES")
    ] = Field(
        default="error",
        description="What a call without a recording gets (simulate needs a simulator, upstream "
        "an upstream URL); also a plugin's policy or package.module:Class.",
    )
    miss_options: SecretOptions = Field(
        default_factory=dict,
        description="An option of the miss policy (nearest: threshold; upstream: upstream_url, "
        "timeout; a plugin's own), VALUE as JSON, else text; the policy's options class "
        "validates them.",
    )
    simulator: Annotated[OptionalSecretText, Flag(metavar="MODEL")] = Field(
        default=None,
        description="For simulate: the model that plays missing APIs, schema-sim (offline) or "
        "any model name (refused with a miss policy that takes no simulator).",
    )
    upstream_url: Annotated[OptionalSecretText, Flag(metavar="URL")] = Field(
        default=None,
        description="For upstream: the real API's base URL, http(s) (refused with a miss policy "
        "that takes none).",
    )
    overlay: Annotated[str | None, Flag(metavar="PATH")] = Field(
        default=None,
        description="Where simulate and upstream keep what they produced (default: "
        "SUITE/overlay.sqlite).",
    )
    fault_rate: Annotated[float | None, Flag(metavar="R")] = Field(
        default=None, ge=0.0, le=1.0, description="Share of tool calls that meet an injected fault."
    )
    fault_seed: Annotated[int | None, Flag(metavar="S")] = Field(
        default=None, description="Seed of the fault draws (default: the run's seed)."
    )
    recording_scope: Annotated[str | None, Flag(metavar="SCOPE")] = Field(
        default=None,
        description="Each episode's calls are answered by the suite's recordings scoped "
        "'<this>/<task id>' first (imported runs).",
    )
    transport: Annotated[str | None, Flag(metavar="NAME")] = Field(
        default=None,
        description="The tool transport by name (in-process, http, mcp, recorded, a plugin's, "
        "or package.module:NAME); default: the one the tools URL, the MCP server or a replay "
        "selects, else in-process.",
    )
    transport_options: SecretOptions = Field(
        default_factory=dict,
        description="An option of the tool transport (in-process and http: timeout, seconds "
        "per call); its options class validates them.",
    )

    @field_validator("miss_policy")
    @classmethod
    def _known_policy(cls, value: str, info: ValidationInfo) -> str:
        try:
            if _checked(info):
                miss_policy_kind(value)
        except MockToolsError as e:
            raise ValueError(str(e)) from e
        return value

    @model_validator(mode="after")
    def _miss_options_fit(self, info: ValidationInfo) -> ToolsConfig:
        """The miss policy's options class takes ``miss_options`` (``--miss-option``) and the
        flags that spell one of its options (``--simulator``, ``--upstream-url``); such a flag
        given for a policy without that option is refused, not ignored."""
        if not _checked(info):
            return self
        given = dict(self.miss_options)
        try:
            takes = miss_policy_kind(self.miss_policy).options.model_fields
            for option in ("simulator", "upstream_url"):
                if getattr(self, option) is not None and option not in takes:
                    raise ValueError(
                        f"--{option.replace('_', '-')} is an option of another miss policy: "
                        f"--miss-policy {self.miss_policy} takes no {option}"
                    )
            if self.upstream_url is not None:
                given.setdefault("upstream_url", self.upstream_url)
            miss_policy_options(self.miss_policy, given)
        except MockToolsError as e:
            raise ValueError(f"{e} (--miss-option, --upstream-url)") from e
        return self

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
    def _one_source(self) -> ToolsConfig:
        if self.mcp_server and self.url:
            raise ValueError("tools come from --tools-url or --mcp-server, not both")
        if self.replay and (self.mcp_server or self.url):
            raise ValueError("a replay's tools come from its recording, not a server")
        if self.record_into and not self.mcp_server:
            raise ValueError("--record-into records what an MCP server answers: add --mcp-server")
        return self


class ExecutorConfig(BaseModel):
    """Where the episodes run (``sandbox.run.executor``) and how many at once."""

    model_config = _SECTION

    name: Annotated[str, Flag(metavar="NAME", registry="sandbox.run.executor:EXECUTORS")] = Field(
        default="local",
        description="Where episodes run (docs/scaling.md); also a plugin's executor or "
        "package.module:NAME.",
    )
    options: SecretOptions = Field(
        default_factory=dict,
        description="An option of the executor (ray: max_restarts, object_store_mb); its "
        "options class validates them.",
    )
    ray_address: Annotated[OptionalSecretText, Flag(metavar="ADDR")] = Field(
        default=None,
        description="With the ray executor: the cluster to join (default: a private local Ray).",
    )
    concurrency: Annotated[int, Flag(metavar="N")] = Field(
        default=DEFAULT_CONCURRENCY, ge=1, description="Episodes run at once."
    )

    @model_validator(mode="after")
    def _address_for_ray(self) -> ExecutorConfig:
        if self.ray_address and self.name != "ray":
            raise ValueError("--ray-address needs --executor ray")
        return self


class EvalConfig(BaseModel):
    """The scoring at the end of the run (``sandbox.eval``: scores.json and report.md)."""

    model_config = _SECTION

    plots: Annotated[bool, Flag(name="--no-plots", help="skip the PNG plots of the report")] = (
        Field(
            default=True,
            description="Draw the report's PNG plots (`sandbox run` and `sandbox compare`; "
            "`run_suite` takes `plots=`).",
        )
    )
    judge: Annotated[OptionalSecretText, Flag(metavar="MODEL")] = Field(
        default=None,
        description="Judge model for the scoring at the end of the run (as `sandbox eval "
        "--judge`): an alias from models.yaml or openai:<model>@<base_url>. It decides the "
        "natural-language assertions of world tasks (τ²-bench's) and what the default "
        "protocol's checks and rules cannot; probed before the first episode.",
    )


class OutputConfig(BaseModel):
    """Where the run folder goes and what the command prints."""

    model_config = _SECTION

    out: Annotated[str, Flag(metavar="DIR")] = Field(
        default=DEFAULT_OUT, description="Folder that receives run folders."
    )
    run_id: Annotated[str | None, Flag(metavar="ID")] = Field(
        default=None,
        description="Fixed run id (default: <UTC time>-<agent>-<model>-<hash>).",
    )
    compress: bool = Field(
        default=False,
        description="Store the trajectories as trajectories.jsonl.zst: one zstd frame per "
        "group of episodes written together (every reader takes both files).",
    )
    json_line: Annotated[bool, Flag(name="--json")] = Field(
        default=False,
        description="One JSON line on stdout ({run, episodes, pass_rate, by_status, "
        "model_calls, tokens, cost_usd}); the tables go to stderr.",
    )

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, value: str | None) -> str | None:
        return None if value is None else check_run_id(value)


UserMiss = Literal["error", "live", "scripted"]


class UserConfig(BaseModel):
    """The user of conversational tasks (docs/conversations.md)."""

    model_config = _SECTION

    model: Annotated[str | None, Flag(name="--user-model", metavar="NAME")] = Field(
        default=None,
        description="Who plays the user: scripted-user, persona-user (offline), or any model "
        "alias (an LLM plays the persona). Default: the task's script, else persona-user.",
    )
    record: Annotated[str | None, Flag(name="--user-record", metavar="PATH")] = Field(
        default=None,
        description="The record of a model-played user's answers, keyed by task, user model, "
        "persona and transcript (default: users.jsonl beside the suite's files); a recorded "
        "answer is replayed, never asked again.",
    )
    miss: Annotated[UserMiss, Flag(name="--user-miss")] = Field(
        default="live",
        description="A transcript the record does not hold: error (a user failure), live (ask "
        "the user model and record its answer) or scripted (the task's script answers).",
    )

    @field_validator("record")
    @classmethod
    def _record_file(cls, value: str | None, info: ValidationInfo) -> str | None:
        return usable_file_path(value) if _checked(info) else value


class RunConfig(BaseModel):
    """Everything that decides what a run does. Stored in the manifest; secrets never are."""

    model_config = _SECTION

    suite: Annotated[str, Flag(metavar="SUITE")] = Field(
        default=DEFAULT_SUITE, description="The suite folder."
    )
    agent: AgentConfig = Field(default_factory=AgentConfig)
    model: ModelConfig = Field(default_factory=ModelConfig)
    seed: Annotated[int, Flag(metavar="SEED")] = Field(
        default=0, description="Seed of the offline models and of the fault draws."
    )
    trials: Annotated[int, Flag(metavar="K")] = Field(
        default=1,
        ge=1,
        description="Episodes per task; with more than one the scores add pass@k and pass^k.",
    )
    tasks: Annotated[list[str], Flag(metavar="IDS")] = Field(
        default_factory=list,
        description="Task ids or fnmatch globs, repeated or comma-separated (default: every task).",
    )
    preset: Annotated[
        str | None, Flag(metavar="NAME", registry="agents.presets:PRESETS", choices=True)
    ] = Field(
        default=None,
        description="Fill the agent options, budgets and model request not given with a "
        "preset's values, and offer the tools its way (toolbench: ToolBench's; "
        "stabletoolbench: StableToolBench's script; docs/agents.md).",
    )
    budget: BudgetConfig = Field(default_factory=BudgetConfig)
    user: UserConfig = Field(default_factory=UserConfig)
    tools: ToolsConfig = Field(default_factory=ToolsConfig)
    executor: ExecutorConfig = Field(default_factory=ExecutorConfig)
    eval: EvalConfig = Field(default_factory=EvalConfig)
    output: OutputConfig = Field(default_factory=OutputConfig)
    task_settings: Annotated[dict[str, TaskSettings], Flag(metavar="TASK=JSON")] = Field(
        default_factory=dict,
        description="Per task id: the agent options and budgets that differ from the run's "
        "(what an imported run's trees were settled with).",
    )

    @model_validator(mode="before")
    @classmethod
    def _upgrade(cls, data: Any) -> Any:
        """Read older manifests: flat fields, agent options as top-level fields, ``fork``."""
        return upgrade_flat(data, cls)

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str | None) -> str | None:
        if value is not None and value not in PRESETS:
            raise ValueError(f"unknown preset {value!r}; known: {', '.join(PRESETS.names())}")
        return value

    @model_validator(mode="after")
    def _one_writer(self) -> RunConfig:
        if self.tools.record_into and self.executor.name != "local":
            raise ValueError(
                "--record-into writes one suite from one process: use --executor local"
            )
        return self

    def with_values(self, values: Mapping[str, Any]) -> RunConfig:
        """A copy with the settings at these dotted paths replaced (``{"output.out": ...}``)."""
        return with_values(self, values)

    def model_copy(self, *, update: Mapping[str, Any] | None = None, deep: bool = False) -> Self:
        """``BaseModel.model_copy``, refusing an update of a field that does not exist (the flat
        names of older configs: ``with_values({"output.run_id": ...})`` sets a section's)."""
        unknown = sorted(set(update or {}) - set(type(self).model_fields))
        if unknown:
            raise KeyError(f"RunConfig has no field {', '.join(unknown)}: use with_values(paths)")
        return super().model_copy(update=update, deep=deep)

    def offline(self) -> RunConfig:
        """The config that re-runs this one without its live tools: an MCP run recorded into a
        suite reads that suite in process; any other run is returned as it is."""
        if not (self.tools.mcp_server and self.tools.record_into):
            return self
        return self.with_values(
            {"suite": self.tools.record_into, "tools.mcp_server": None, "tools.record_into": None}
        )

    def strategy(self, task_id: str | None = None) -> ResolvedStrategy:
        """The agent strategy with its validated options (``AgentsError`` if invalid): the
        preset's values, then the run's options, then the task's own (``task_settings``)."""
        options = dict(self.agent.options)
        if self.preset is not None:
            options, _ = apply_preset(self.preset, self.agent.name, options, {})
        own = self.task_settings.get(task_id) if task_id is not None else None
        if own is not None:
            options.update(own.agent_options)
        return resolve_strategy(self.agent.name, options)

    def budget_for(self, task_id: str | None = None) -> Budget:
        """An episode's budget: the run's, the preset's where the run sets none, the task's own."""
        values = self.budget.episode_budget().model_dump()
        if self.preset is not None:
            given = {k: v for k, v in values.items() if v is not None}
            _, values = apply_preset(self.preset, self.agent.name, {}, given)
        own = self.task_settings.get(task_id) if task_id is not None else None
        if own is not None:
            values.update(own.model_dump(exclude={"agent_options"}, exclude_none=True))
        return Budget(**values)

    def run_faults(self) -> FaultConfig | None:
        """The run-wide fault settings, or None when no fault setting was given."""
        tools = self.tools
        if tools.fault_rate is None and tools.fault_seed is None:
            return None
        return FaultConfig(
            rate=tools.fault_rate or 0.0,
            kinds=list(FAULT_KINDS),
            seed=tools.fault_seed if tools.fault_seed is not None else self.seed,
        )
