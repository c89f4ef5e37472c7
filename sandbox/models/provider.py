"""Model kinds: what a ``kind`` of ``models.yaml`` builds, and the registry that names them.

A kind turns a resolved ``ModelSpec`` (what the manifest records of a model) into a
``ModelProvider``, the run's source of models: one shared client for a remote endpoint, one
seeded model per episode for the offline kinds. Adding a kind is a module with a builder and one
``register_model_kind`` call (``sandbox.models.kinds`` registers the built-in ones), or a
``ModelKind`` an installed package declares in the ``agent_sandbox.model_kinds`` entry-point
group, or one named by path (``kind: my_pkg.kinds:MY_KIND`` in ``models.yaml``).
May import ``agents``, ``mock_tools`` and ``sandbox.errors`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from agents.model import MAX_REPLY_BYTES, Model
from agents.models.retry import RetryPolicy
from agents.registry import Registry, UnknownName, instances_of
from mock_tools.models import Task
from mock_tools.simulation import ToolSimulator
from sandbox.models.launch import LaunchSpec
from sandbox.models.prices import Price
from sandbox.store.config import ModelConfig
from sandbox.store.redact import redact

__all__ = [
    "MODEL_KINDS",
    "KindName",
    "ModelKind",
    "ModelProvider",
    "ModelSettings",
    "ModelSpec",
    "OfflineModels",
    "QuestionSource",
    "ToolCalls",
    "register_model_kind",
]


def _known_kind(kind: str) -> str:
    try:
        MODEL_KINDS.get(kind)
    except UnknownName as e:
        raise ValueError(str(e)) from e
    return kind


KindName = Annotated[str, AfterValidator(_known_kind)]
"""A model kind's name, checked against the registry."""

ToolCalls = Literal["native", "text", "toolbench"]
"""How a chat endpoint gets the tools and the history: ``native`` (OpenAI tool calls, the strict
message shape), ``text`` (Thought/Action prompting, ``TextReActModel``), ``toolbench`` (native tool
calls, the history as ToolBench's client sends it: ``agents.models.message_shapes``)."""


class ModelSpec(BaseModel):
    """A resolved model: what the manifest records (the API key is never dumped)."""

    name: str = Field(description="The name as given on the command line.")
    kind: KindName
    model: str | None = None
    base_url: str | None = None
    tool_calls: ToolCalls = "native"
    timeout: float = 120.0
    retry: RetryPolicy | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    start_hint: str | None = None
    launch: LaunchSpec | None = Field(
        default=None, description="How to start the server when none answers at base_url."
    )
    max_seconds: float | None = Field(
        default=None, description="Per-episode wall-clock default of runs of this model."
    )
    unescape_html: bool = Field(
        default=False, description="Unescape HTML entities in the model's replies."
    )
    base_url_env: str | None = Field(default=None, description="Env var that overrides base_url.")
    price: Price | None = Field(default=None, description="USD per 1M tokens; None costs 0.")
    price_source: str = Field(default="", description="Where the price came from.")
    api_key: str | None = Field(default=None, exclude=True, repr=False)

    @property
    def remote(self) -> bool:
        return MODEL_KINDS.get(self.kind).remote

    @property
    def display_name(self) -> str:
        """The name with any credentials of its URL redacted (for records and messages)."""
        return redact(self.name)

    def public(self) -> dict[str, Any]:
        """What a manifest records of the model: no key, no hint, no env var name, and no
        credentials inside its name or base URL."""
        out = self.model_dump(exclude={"api_key", "start_hint", "base_url_env"})
        out["name"] = self.display_name
        if self.base_url:
            out["base_url"] = redact(self.base_url)
        return out


class ModelProvider(Protocol):
    """The models of one run."""

    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        """The model that plays episode ``(task, trial)`` of a run seeded with ``seed``."""
        ...

    async def probe(self) -> None:
        """Check the endpoint once before any episode; ``ModelUnreachableError`` if it is down."""
        ...

    async def aclose(self) -> None: ...


@dataclass(frozen=True)
class ModelSettings:
    """What building a model may need besides its spec."""

    env: Mapping[str, str] = field(default_factory=dict)
    """The environment (API keys of models a kind resolves itself, e.g. a fork's live model)."""
    cache_path: str | None = None
    """SQLite file of the opt-in model-call cache (remote kinds)."""
    max_reply_bytes: int = MAX_REPLY_BYTES
    """The cap on each reply of a remote model (``agents.models.reply_limit``)."""

    @classmethod
    def of(cls, config: ModelConfig, env: Mapping[str, str] | None = None) -> ModelSettings:
        """What a run's ``model`` settings give the model kinds (``env`` for their keys)."""
        return cls(
            env=dict(env or {}),
            cache_path=config.cache,
            max_reply_bytes=config.max_reply_bytes,
        )


QuestionSource = Literal["live", "reference"]
"""Where a model kind's answers to new questions come from (``ModelKind.questions``)."""


@dataclass(frozen=True)
class ModelKind:
    name: str
    build: Callable[[ModelSpec, ModelSettings], ModelProvider]
    remote: bool = False
    """Talks to an endpoint (probed before a run; a judge must be one)."""
    parse_arg: Callable[[str, str], dict[str, Any]] | None = None
    """Reads the ``:`` argument of a name (``noisy-reference:0.5``); None: the kind takes none."""
    direct: bool = False
    """Usable by its kind name alone, without an alias in ``models.yaml`` (``fork``)."""
    simulator: Callable[[ModelSpec], ToolSimulator] | None = None
    """Builds a tool simulator from the spec (``--simulator``); None: the kind cannot."""
    summary: str = ""
    questions: QuestionSource | None = None
    """How the kind's models answer questions outside an episode (``sandbox probe``): ``live``,
    its model answers any question; ``reference``, it follows the task's reference path and the
    probe's oracle answers for it, making mistakes at ``mistake_rate``; None: it cannot (a
    replay only repeats a run)."""
    mistake_rate: Callable[[ModelSpec], float] | None = None
    """The rate of seeded mistakes of a reference-following kind (None: it makes none)."""
    options: type[BaseModel] | None = None
    """The params the kind reads (an alias's ``params``, ``--model-option``, its ``:`` argument)
    as a pydantic class that refuses any other; None: any (an endpoint's request params)."""


class NoOptions(BaseModel):
    """The options of a kind that reads none."""

    model_config = ConfigDict(extra="forbid")


MODEL_KINDS: Registry[ModelKind] = Registry(
    "model kind",
    group="agent_sandbox.model_kinds",
    adapt=instances_of(ModelKind),
    expected="a ModelKind (sandbox.models)",
)
"""Kind name -> ``ModelKind``: the built-ins, what code registered, plugins (the
``agent_sandbox.model_kinds`` entry points) and ``package.module:NAME`` paths."""


def register_model_kind(kind: ModelKind, *, replace: bool = False) -> ModelKind:
    return MODEL_KINDS.register(kind.name, kind, replace=replace)


class OfflineModels:
    """Base of the offline kinds: nothing to probe, nothing to close."""

    def __init__(self, spec: ModelSpec) -> None:
        self.spec = spec

    async def probe(self) -> None:
        return None

    async def aclose(self) -> None:
        return None
