"""The offline kinds ``reference``, ``noisy-reference`` and ``explorer``: a model per episode.

The first two follow the task's reference path (``agents.models.reference``); the noisy one makes
seeded mistakes at ``rate``, drawn from ``(seed, task, trial)`` and the position in the tree, so a
run is reproducible bit for bit. ``explorer`` needs no reference: it calls each offered tool once
and answers with what it saw (``agents.models.explorer``), a smoke-test baseline. May import
``sandbox.models.provider`` and ``sandbox.errors`` only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.model import Model
from agents.models.explorer import ExplorerModel
from agents.models.noisy import NoisyReferenceModel
from agents.models.reference import PlanStep, ReferenceModel, ReferencePlan
from mock_tools.models import Task
from sandbox.errors import ConfigError
from sandbox.models.provider import ModelSettings, ModelSpec, OfflineModels

__all__ = [
    "ExplorerModels",
    "NoisyOptions",
    "NoisyReferenceModels",
    "ReferenceModels",
    "build_explorer",
    "noise_rate",
    "parse_rate",
    "reference_plan",
]

DEFAULT_RATE = 0.3


class NoisyOptions(BaseModel):
    """What ``noisy-reference`` reads: the rate of its seeded mistakes."""

    model_config = ConfigDict(extra="forbid")

    rate: float = Field(default=DEFAULT_RATE, ge=0.0, le=1.0)


def reference_plan(task: Task) -> ReferencePlan:
    """The task's reference solution as the offline models' plan (function names)."""
    steps = [
        PlanStep(thought=s.thought, function=s.offered_name, args=dict(s.args), turn=s.turn)
        for s in task.reference.agent_steps
    ]
    return ReferencePlan(
        steps=steps,
        answer=task.reference.answer,
        solvable=task.solvable,
        replies=list(task.reference.replies),
    )


class ReferenceModels(OfflineModels):
    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        return ReferenceModel(reference_plan(task))


class ExplorerModels(OfflineModels):
    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        return ExplorerModel(name=self.spec.name)


def noise_rate(spec: ModelSpec) -> float:
    """The mistake rate of a ``noisy-reference`` model (its ``:RATE``, else the alias's, else
    ``DEFAULT_RATE``)."""
    return float(spec.params.get("rate", DEFAULT_RATE))


class NoisyReferenceModels(OfflineModels):
    def for_episode(self, task: Task, *, seed: int, trial: int) -> Model:
        rate = noise_rate(self.spec)
        episode_seed = seed * 1_000_003 + trial
        return NoisyReferenceModel(
            reference_plan(task), rate=rate, seed=episode_seed, task_id=task.id
        )


def build_reference(spec: ModelSpec, settings: ModelSettings) -> ReferenceModels:
    return ReferenceModels(spec)


def build_noisy(spec: ModelSpec, settings: ModelSettings) -> NoisyReferenceModels:
    return NoisyReferenceModels(spec)


def build_explorer(spec: ModelSpec, settings: ModelSettings) -> ExplorerModels:
    return ExplorerModels(spec)


def parse_rate(arg: str, name: str) -> dict[str, Any]:
    """``noisy-reference:0.5`` -> ``{"rate": 0.5}``; no argument keeps the alias's rate."""
    if not arg:
        return {}
    try:
        rate = float(arg)
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate <= 1.0:
        raise ConfigError(f"bad noise rate in {name!r}: expected a number in [0, 1]")
    return {"rate": rate}
