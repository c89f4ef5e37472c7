"""Model kinds: what a ``kind`` of ``models.yaml`` builds, and the registry that names them.

A kind turns a resolved ``ModelSpec`` (what the manifest records of a model) into a
``ModelProvider``, the run's source of models: one shared client for a remote endpoint, one
seeded model per episode for the offline kinds. Adding a kind is a module with a builder and one
``register_model_kind`` call (``sandbox.models.kinds`` registers the built-in ones).
May import ``agents``, ``mock_tools`` and ``sandbox.errors`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Protocol

from pydantic import AfterValidator, BaseModel, Field

from agents.model import Model
from agents.models.retry import RetryPolicy
from agents.registry import Registry
from mock_tools.models import Task
from mock_tools.simulation import ToolSimulator
from sandbox.models.prices import Price
from sandbox.store.redact import redact

__all__ = [
    "MODEL_KINDS",
    "KindName",
    "ModelKind",
    "ModelProvider",
    "ModelSettings",
    "ModelSpec",
    "OfflineModels",
    "register_model_kind",
]


def _known_kind(kind: str) -> str:
    if kind not in MODEL_KINDS:
        raise ValueError(f"unknown model kind {kind!r}; known: {', '.join(MODEL_KINDS.names())}")
    return kind


KindName = Annotated[str, AfterValidator(_known_kind)]
"""A model kind's name, checked against the registry."""


class ModelSpec(BaseModel):
    """A resolved model: what the manifest records (the API key is never dumped)."""

    name: str = Field(description="The name as given on the command line.")
    kind: KindName
    model: str | None = None
    base_url: str | None = None
    tool_calls: Literal["native", "text"] = "native"
    timeout: float = 120.0
    retry: RetryPolicy | None = None
    params: dict[str, Any] = Field(default_factory=dict)
    start_hint: str | None = None
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


MODEL_KINDS: Registry[ModelKind] = Registry("model kind")


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
