"""Tool simulators from model names: ``--simulator MODEL`` for the ``simulate`` miss policy.

``build_simulator(name)`` resolves the name like ``--model`` does (an alias of ``models.yaml``,
``openai:<model>@<base_url>``, or the offline ``schema-sim``) and asks its kind for a simulator
(``ModelKind.simulator`` in the registry): an OpenAI-compatible model becomes a
``ModelSimulator`` (a ``PromptedSimulator`` at temperature 0, in JSON mode when the endpoint takes
it; its retries and failures are infrastructure, counted in the simulator's usage), ``schema-sim``
the deterministic ``SchemaSimulator``. ``resolve_simulator`` is the ``mock_tools.simulators``
entry point, so ``python -m mock_tools serve --simulator MODEL`` knows the same names. May import
``sandbox.models`` modules only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from agents.errors import ModelError
from agents.model import Model
from mock_tools.simulation import Completion, PromptedSimulator, SimulationFailed, ToolSimulator
from sandbox.errors import ConfigError
from sandbox.models.provider import MODEL_KINDS
from sandbox.models.specs import resolve_model

__all__ = ["ModelCompleter", "ModelSimulator", "build_simulator", "resolve_simulator"]

JSON_MODE = {"type": "json_object"}


class ModelCompleter:
    """``complete(messages)`` for a ``PromptedSimulator`` over an agents ``Model``.

    Asks at temperature 0 in JSON mode; an endpoint that refuses JSON mode (HTTP 400) is asked
    again without it, and not in JSON mode from then on. A model failure after the client's
    retries is a ``SimulationFailed``.
    """

    def __init__(self, model: Model, *, temperature: float = 0.0) -> None:
        self.model = model
        self.temperature = temperature
        self.json_mode = True

    async def __call__(self, messages: list[dict[str, Any]]) -> Completion:
        params: dict[str, Any] = {"temperature": self.temperature}
        if self.json_mode:
            params["response_format"] = JSON_MODE
        try:
            turn = await self.model.complete(messages, [], params)
        except ModelError as e:
            if self.json_mode and e.kind == "bad_request":
                self.json_mode = False
                return await self(messages)
            raise SimulationFailed(f"the simulator model failed: {e}") from e
        return Completion(
            text=turn.content or "",
            prompt_tokens=turn.usage.prompt_tokens,
            completion_tokens=turn.usage.completion_tokens,
            cost=turn.usage.cost,
            retries=turn.retries,
        )

    async def aclose(self) -> None:
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()


class ModelSimulator(PromptedSimulator):
    """A prompted simulator over a model client, which it closes with the server."""

    def __init__(self, model: Model, *, name: str) -> None:
        self.completer = ModelCompleter(model)
        super().__init__(self.completer, name=name)

    async def aclose(self) -> None:
        await self.completer.aclose()


def build_simulator(name: str, *, env: Mapping[str, str] | None = None) -> ToolSimulator:
    """The simulator named ``name``; ``ConfigError`` for a model that cannot play an API."""
    spec = resolve_model(name, env=env)
    builder = MODEL_KINDS.get(spec.kind).simulator
    if builder is None:
        raise ConfigError(
            f"model {name!r} (kind {spec.kind}) cannot simulate tools; use schema-sim (offline) "
            "or an OpenAI-compatible model (an alias of models.yaml, openai:<model>@<base_url>)"
        )
    return builder(spec)


def resolve_simulator(name: str) -> ToolSimulator | None:
    """The ``mock_tools.simulators`` entry point: a simulator for a model name, from the process
    environment (API keys, ``SANDBOX_MODELS_FILE``)."""
    return build_simulator(name, env=os.environ)
