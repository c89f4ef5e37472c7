"""Which step-level scores an evaluation computes: step protocols, extra metrics, their options.

``StepSelection`` is what ``--step-protocol NAME`` (repeatable; default ``default``),
``--step-metric NAME`` (repeatable: a registered step metric added to every chosen protocol's
set) and ``--step-option METRIC.KEY=VALUE`` say; ``resolve()`` turns it into the metrics each
protocol runs with (``ChosenProtocol``), or a ``ConfigError`` that names the problem: an unknown
name (with the known ones), options the metric's options class rejects, an option for a metric
nothing runs, or two metrics of one protocol that name a measure alike.
May import ``sandbox.errors`` and ``eval.steps`` modules.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from pydantic import BaseModel, Field, ValidationError

from agents.registry import Registry, UnknownName
from sandbox.errors import ConfigError
from sandbox.eval.steps import default_metrics  # noqa: F401  (registers the built-ins)
from sandbox.eval.steps.metric import (
    DEFAULT_STEP_PROTOCOL,
    STEP_METRICS,
    STEP_PROTOCOLS,
    ScoredMetric,
    StepMetric,
    StepProtocol,
)

__all__ = ["ChosenProtocol", "StepSelection"]

T = TypeVar("T")


@dataclass(frozen=True)
class ChosenProtocol:
    """A step protocol as an evaluation runs it: its own metrics and the ones added to it."""

    protocol: StepProtocol
    own: tuple[ScoredMetric, ...]
    extra: tuple[ScoredMetric, ...]

    @property
    def name(self) -> str:
        return self.protocol.name

    @property
    def metrics(self) -> tuple[ScoredMetric, ...]:
        return (*self.own, *self.extra)


class StepSelection(BaseModel):
    """The step protocols to score a run under, the metrics added to each, and their options."""

    protocols: list[str] = Field(default_factory=lambda: [DEFAULT_STEP_PROTOCOL])
    metrics: list[str] = Field(default_factory=list)
    options: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="Options per step metric name."
    )

    @property
    def is_default(self) -> bool:
        """Only the ``default`` protocol, nothing added: what every run is scored with."""
        return self.protocols == [DEFAULT_STEP_PROTOCOL] and not self.metrics and not self.options

    def resolve(self) -> list[ChosenProtocol]:
        """The metrics of every chosen protocol, with their options (``ConfigError``: see the
        module doc)."""
        if not self.protocols:
            raise ConfigError("no step protocol chosen")
        scored: dict[str, ScoredMetric] = {}

        def scored_metric(name: str) -> ScoredMetric:
            metric = _lookup(STEP_METRICS, name)
            if metric.name not in scored:
                scored[metric.name] = ScoredMetric(metric, _options(metric, self.options))
            return scored[metric.name]

        extra = [scored_metric(n) for n in dict.fromkeys(self.metrics)]
        chosen = []
        for name in dict.fromkeys(self.protocols):
            protocol = _lookup(STEP_PROTOCOLS, name)
            own = tuple(scored_metric(m) for m in protocol.metrics)
            _check_measures(protocol, own)
            added = tuple(m for m in extra if m.name not in protocol.metrics)
            chosen.append(ChosenProtocol(protocol, own, added))
        unused = sorted(set(self.options) - set(scored))
        if unused:
            raise ConfigError(
                f"--step-option for step metric(s) {', '.join(unused)} that no chosen step "
                f"protocol or --step-metric runs"
            )
        return chosen


def _lookup(registry: Registry[T], name: str) -> T:
    try:
        return registry.get(name)
    except UnknownName as e:
        raise ConfigError(str(e)) from e


def _options(metric: StepMetric, options: Mapping[str, Mapping[str, Any]]) -> BaseModel:
    given = options.get(metric.name, {})
    try:
        return metric.options.model_validate(dict(given))
    except ValidationError as e:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'options'}: {err['msg']}"
            for err in e.errors()
        )
        raise ConfigError(f"bad options for step metric {metric.name!r}: {problems}") from e


def _check_measures(protocol: StepProtocol, metrics: tuple[ScoredMetric, ...]) -> None:
    seen: dict[str, str] = {}
    for m in metrics:
        for d in m.measures:
            if d in seen:
                raise ConfigError(
                    f"step protocol {protocol.name!r}: metrics {seen[d]!r} and {m.name!r} both "
                    f"name a measure {d!r}"
                )
            seen[d] = m.name
