"""Step metrics and step protocols, and the two registries that name them.

A **step metric** is pure function(s) over one episode (``StepEpisode``: the trajectory, its task
and reference, what the steps did) producing named ``Measure``s, with a pydantic options class
and a one-line summary. A **step protocol** is a named set of step metrics, the definitions a
run's step-level scores are computed with: ``default`` is the project's (``default_metrics``);
a benchmark's own definitions are another protocol (``--step-protocol NAME``).

Registering is an import-time act of the module that defines the thing
(``register_step_metric``, ``register_step_protocol``); tests register for a ``with`` block
(``STEP_METRICS.registered(name, metric)``). May import ``agents`` (the registry) and
``sandbox.errors`` and ``eval.steps`` modules.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict

from agents.plugin_calls import broke, is_foreign, plugin_code, returned, unit_rate
from agents.registry import Registry, instances_of
from sandbox.errors import ConfigError
from sandbox.eval.steps.episode import StepEpisode
from sandbox.eval.steps.measure import Measure

__all__ = [
    "DEFAULT_STEP_PROTOCOL",
    "STEP_METRICS",
    "STEP_METRICS_GROUP",
    "STEP_PROTOCOLS",
    "STEP_PROTOCOLS_GROUP",
    "NoOptions",
    "ScoredMetric",
    "StepMetric",
    "StepMetricError",
    "StepProtocol",
    "register_step_metric",
    "register_step_protocol",
]

STEP_METRICS_GROUP = "agent_sandbox.step_metrics"
"""The entry-point group in which installed packages declare step metrics."""
STEP_PROTOCOLS_GROUP = "agent_sandbox.step_protocols"
"""The entry-point group in which installed packages declare step protocols."""
DEFAULT_STEP_PROTOCOL = "default"
NOT_APPLICABLE = Measure()
"""What a measure a metric left out of an episode is (shared: measures are never changed)."""

Score = Callable[[StepEpisode, Any], Mapping[str, Measure]]
"""``score(episode, options) -> {measure name: Measure}`` (options: the metric's options class)."""


class StepMetricError(ConfigError):
    """A step metric that is not what it declares (a one-line error naming the metric)."""


class NoOptions(BaseModel):
    """The options of a metric that takes none."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class StepMetric:
    """A step metric: ``score`` gives, for one episode, a ``Measure`` per name of ``measures``
    (value in [0, 1], or None where the metric does not apply to the episode; ``n``: the units
    behind it). A name it leaves out does not apply; a name it does not declare is an error."""

    name: str
    summary: str
    """One line: what it measures (the CLI's help lists it)."""
    measures: tuple[str, ...]
    """The names of its measures, in report order."""
    score: Score
    options: type[BaseModel] = NoOptions
    """Its settings (``--step-option NAME.KEY=VALUE``); validated before anything is scored."""
    headline: str = ""
    """The measure a compact table shows for it (default: the first)."""
    similarity: bool = False
    """It compares texts with the run's thought similarity (``StepEpisode.context.similarity``),
    so a report of it says which one scored."""
    pooled: tuple[str, ...] = ()
    """Measures whose run value is the mean over all their units, each episode weighing its
    ``n`` (a benchmark that averages over its samples, not over episodes); the others are the
    mean over episodes."""

    def __post_init__(self) -> None:
        if not self.measures:
            raise StepMetricError(f"step metric {self.name!r} declares no measures")
        stray = set(self.pooled) - set(self.measures)
        if stray:
            raise StepMetricError(
                f"step metric {self.name!r}: pooled {', '.join(sorted(stray))} not among its "
                "measures"
            )
        if self.headline and self.headline not in self.measures:
            raise StepMetricError(
                f"step metric {self.name!r}: headline {self.headline!r} is not one of its measures"
            )

    @property
    def main_measure(self) -> str:
        return self.headline or self.measures[0]


@dataclass(frozen=True)
class ScoredMetric:
    """A step metric with the options it runs with."""

    metric: StepMetric
    options: BaseModel = field(default_factory=NoOptions)

    @property
    def name(self) -> str:
        return self.metric.name

    @property
    def measures(self) -> tuple[str, ...]:
        return self.metric.measures

    def is_pooled(self, measure: str) -> bool:
        return measure in self.metric.pooled

    def measure(self, episode: StepEpisode) -> dict[str, Measure]:
        """The metric's measures of ``episode``, in declared order (a left-out one: not
        applicable); ``StepMetricError`` for a name it does not declare. A metric of the user's
        own is called as plugin code (``agents.plugin_calls``: what it raises is one line naming
        it) and what it gives is checked: a mapping of ``Measure``, each value None or a number
        in [0, 1]."""
        if not is_foreign(self.metric.score):
            got = self.metric.score(episode, self.options)
        else:
            got = self._foreign(episode)
        declared = self.metric.measures
        if len(got) == len(declared) and tuple(got) == declared:
            return dict(got)
        unknown = set(got) - set(declared)
        if unknown:
            raise StepMetricError(
                f"step metric {self.name!r} returned undeclared measure(s) "
                f"{', '.join(sorted(unknown))}; it declares {', '.join(declared)}"
            )
        return {m: got.get(m, NOT_APPLICABLE) for m in declared}

    def _foreign(self, episode: StepEpisode) -> Mapping[str, Measure]:
        what = f"step metric {self.name!r}"
        with plugin_code(what, StepMetricError):
            got = self.metric.score(episode, self.options)
        got = returned(what, got, Mapping, "a mapping of measures", StepMetricError)
        for name, measure in got.items():
            if not isinstance(measure, Measure):
                raise broke(
                    what,
                    f"measure {name!r} is a {type(measure).__name__}, not a Measure",
                    StepMetricError,
                )
            if measure.value is not None:
                unit_rate(what, f"measure {name!r}", measure.value, StepMetricError)
        return got


@dataclass(frozen=True)
class StepProtocol:
    """A named set of step metrics: the step-level scores of a run under these definitions."""

    name: str
    summary: str
    metrics: tuple[str, ...]
    """Names of registered step metrics, in report order; their measure names must differ."""


STEP_METRICS: Registry[StepMetric] = Registry(
    "step metric",
    group=STEP_METRICS_GROUP,
    adapt=instances_of(StepMetric),
    expected="a step metric (a sandbox.eval.steps.StepMetric)",
)
STEP_PROTOCOLS: Registry[StepProtocol] = Registry(
    "step protocol",
    group=STEP_PROTOCOLS_GROUP,
    adapt=instances_of(StepProtocol),
    expected="a step protocol (a sandbox.eval.steps.StepProtocol)",
)


def register_step_metric(metric: StepMetric, *, replace: bool = False) -> StepMetric:
    """Make ``metric`` nameable (``--step-metric NAME``, a step protocol's ``metrics``)."""
    return STEP_METRICS.register(metric.name, metric, replace=replace)


def register_step_protocol(protocol: StepProtocol, *, replace: bool = False) -> StepProtocol:
    """Make ``protocol`` nameable (``--step-protocol NAME``)."""
    return STEP_PROTOCOLS.register(protocol.name, protocol, replace=replace)
