"""The built-in model kinds, registered by name, and ``build_models``.

======================  =====================================================================
kind                    what it builds
======================  =====================================================================
``openai``              one client of an OpenAI-compatible endpoint (``sandbox.models.remote``)
``reference``           the task's reference path, then its answer (offline)
``noisy-reference``     the same with seeded mistakes at ``rate`` (offline, ``:RATE``)
``explorer``            each offered tool once, then a digest of what it saw (offline baseline)
``replay``              the turns of a recorded run (offline, ``:RUN``)
``fork``                recorded turns up to a step, then another model (named directly)
``schema-sim``          the offline tool simulator for ``--simulator`` (named directly)
``scripted-user``       a task's user script, for ``--user-model`` (offline)
``persona-user``        the deterministic persona player, for ``--user-model`` (offline)
======================  =====================================================================

Importing ``sandbox.models`` registers them. A new kind is a module with a builder and one
``register_model_kind`` line here (or in the caller's own code, or an entry point of the
``agent_sandbox.model_kinds`` group: see ``sandbox.models.provider``).
"""

from __future__ import annotations

from agents.registry import UnknownName
from sandbox.errors import ConfigError
from sandbox.models.fork import ForkOptions, build_fork
from sandbox.models.offline import (
    NoisyOptions,
    build_explorer,
    build_noisy,
    build_reference,
    noise_rate,
    parse_rate,
)
from sandbox.models.provider import (
    MODEL_KINDS,
    ModelKind,
    ModelProvider,
    ModelSettings,
    ModelSpec,
    NoOptions,
    register_model_kind,
)
from sandbox.models.remote import build_remote, build_remote_simulator
from sandbox.models.replay import ReplayOptions, build_replay, parse_run
from sandbox.models.schema_sim import build_schema_agent, build_schema_simulator
from sandbox.models.users import build_persona_user, build_scripted_user

__all__ = ["build_models"]

register_model_kind(
    ModelKind(
        "openai",
        build_remote,
        remote=True,
        simulator=build_remote_simulator,
        summary="OpenAI-compatible endpoint",
        questions="live",
    )
)
register_model_kind(
    ModelKind(
        "reference",
        build_reference,
        summary="follows the reference path",
        questions="reference",
        options=NoOptions,
    )
)
register_model_kind(
    ModelKind(
        "noisy-reference",
        build_noisy,
        parse_arg=parse_rate,
        summary="the reference path with seeded mistakes",
        questions="reference",
        mistake_rate=noise_rate,
        options=NoisyOptions,
    )
)
register_model_kind(
    ModelKind(
        "explorer",
        build_explorer,
        summary="calls each offered tool once, then answers",
        options=NoOptions,
    )
)
register_model_kind(
    ModelKind(
        "replay", build_replay, parse_arg=parse_run, summary="a recorded run", options=ReplayOptions
    )
)
register_model_kind(
    ModelKind(
        "fork",
        build_fork,
        direct=True,
        summary="recorded steps, then another model",
        options=ForkOptions,
    )
)
register_model_kind(
    ModelKind(
        "scripted-user", build_scripted_user, summary="a task's user script", options=NoOptions
    )
)
register_model_kind(
    ModelKind(
        "persona-user",
        build_persona_user,
        summary="the offline persona player (a user)",
        options=NoOptions,
    )
)
register_model_kind(
    ModelKind(
        "schema-sim",
        build_schema_agent,
        direct=True,
        simulator=build_schema_simulator,
        summary="offline tool simulator (response templates)",
        options=NoOptions,
    )
)


def build_models(spec: ModelSpec, settings: ModelSettings | None = None) -> ModelProvider:
    """The provider of ``spec``'s kind (``ConfigError`` for a kind nobody registered)."""
    try:
        kind = MODEL_KINDS.get(spec.kind)
    except UnknownName as e:
        raise ConfigError(str(e)) from e
    return kind.build(spec, settings or ModelSettings())
