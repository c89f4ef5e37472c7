"""The built-in model kinds, registered by name, and ``build_models``.

======================  =====================================================================
kind                    what it builds
======================  =====================================================================
``openai``              one client of an OpenAI-compatible endpoint (``sandbox.models.remote``)
``reference``           the task's reference path, then its answer (offline)
``noisy-reference``     the same with seeded mistakes at ``rate`` (offline, ``:RATE``)
``replay``              the turns of a recorded run (offline, ``:RUN``)
``fork``                recorded turns up to a step, then another model (named directly)
======================  =====================================================================

Importing ``sandbox.models`` registers them. A new kind is a module with a builder and one
``register_model_kind`` line here (or in the caller's own code).
"""

from __future__ import annotations

from sandbox.errors import ConfigError
from sandbox.models.fork import build_fork
from sandbox.models.offline import build_noisy, build_reference, parse_rate
from sandbox.models.provider import (
    MODEL_KINDS,
    ModelKind,
    ModelProvider,
    ModelSettings,
    ModelSpec,
    register_model_kind,
)
from sandbox.models.remote import build_remote
from sandbox.models.replay import build_replay, parse_run

__all__ = ["build_models"]

register_model_kind(
    ModelKind("openai", build_remote, remote=True, summary="OpenAI-compatible endpoint")
)
register_model_kind(ModelKind("reference", build_reference, summary="follows the reference path"))
register_model_kind(
    ModelKind(
        "noisy-reference",
        build_noisy,
        parse_arg=parse_rate,
        summary="the reference path with seeded mistakes",
    )
)
register_model_kind(
    ModelKind("replay", build_replay, parse_arg=parse_run, summary="a recorded run")
)
register_model_kind(
    ModelKind("fork", build_fork, direct=True, summary="recorded steps, then another model")
)


def build_models(spec: ModelSpec, settings: ModelSettings | None = None) -> ModelProvider:
    """The provider of ``spec``'s kind (``ConfigError`` for a kind nobody registered)."""
    kind = MODEL_KINDS.find(spec.kind)
    if kind is None:
        raise ConfigError(
            f"unknown model kind {spec.kind!r}; known: {', '.join(MODEL_KINDS.names())}"
        )
    return kind.build(spec, settings or ModelSettings())
