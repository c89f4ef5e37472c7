"""The kind ``schema-sim``: the offline tool simulator (``--simulator schema-sim``), not an agent.

It builds each missing response from the API's response template and the call
(``mock_tools.simulation.SchemaSimulator``): deterministic, needs no endpoint, so the simulate
path can be tested and shown offline. Asked to play an agent, it says what it is for. May import
``sandbox.models.provider`` and ``sandbox.errors`` only.
"""

from __future__ import annotations

from mock_tools.simulation import SchemaSimulator
from sandbox.errors import ConfigError
from sandbox.models.provider import ModelProvider, ModelSettings, ModelSpec

__all__ = ["build_schema_agent", "build_schema_simulator"]


def build_schema_simulator(spec: ModelSpec) -> SchemaSimulator:
    return SchemaSimulator()


def build_schema_agent(spec: ModelSpec, settings: ModelSettings) -> ModelProvider:
    raise ConfigError(
        "schema-sim simulates tool APIs (--simulator schema-sim); it cannot play an agent: "
        "pick an agent model such as reference, explorer or an OpenAI-compatible endpoint"
    )
