"""``StepScoreTable``: the step scores of many episodes in columns, a few bytes per episode.

A run's step report needs, of each episode, its task, whether it ended on an infrastructure
error, each measure's value and units, its cost and its search tree: as ``EpisodeStepScores``
(a pydantic model per measure) that is ~16 KB an episode, as columns (``array``) ~300 bytes, so
a run of 100,000 episodes is summarised without holding what it was scored from. The summaries
(``summary``, ``measure_summaries``, ``points``) are the run summaries of
``sandbox.eval.steps.step_scores``, which computes them through this table: the same sums in
the same order, so the figures are the same to the last bit. The records of one episode's
scores and of a run's summary (``EpisodeStepScores``, ``DimensionSummary``,
``StepScoresSummary``) are here too; ``step_scores`` re-exports them. Pure; imports
``eval.steps``.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from agents.trajectory import Status
from sandbox.eval.steps.efficiency import Efficiency, TreeStats
from sandbox.eval.steps.measure import Measure
from sandbox.eval.steps.metric import ScoredMetric

__all__ = [
    "DimensionSummary",
    "EpisodeStepScores",
    "StepScoreTable",
    "StepScoresSummary",
    "columns_of",
]


class EpisodeStepScores(BaseModel):
    scenario_id: str
    trial: int = 0
    status: Status
    infra_error: bool = False
    metrics: dict[str, dict[str, Measure]] = Field(
        description="Each step metric's measures, by metric name (in the order scored)."
    )
    efficiency: Efficiency
    tree: TreeStats

    def dimensions(self) -> dict[str, Measure]:
        """Every measure of every metric, by measure name, in report order."""
        return {d: m for measures in self.metrics.values() for d, m in measures.items()}

    def __getitem__(self, dimension: str) -> Measure:
        return self.dimensions()[dimension]


class DimensionSummary(BaseModel):
    mean: float | None = Field(description="Mean over the episodes where it applies.")
    n: int = Field(description="Episodes where the dimension applies.")
    units: int = Field(description="Units (turns, values, steps...) behind those episodes.")


class StepScoresSummary(BaseModel):
    episodes: int
    scored: int = Field(description="Episodes in the means (infra errors excluded).")
    excluded_infra: int
    dimensions: dict[str, DimensionSummary]
    efficiency: dict[str, float] = Field(description="Mean per scored episode.")
    efficiency_total: dict[str, float] = Field(description="Sum over scored episodes.")
    tree: dict[str, float] = Field(description="Mean per scored episode.")


_ColumnKey = tuple[str, str]


class _Column:
    """One measure of every episode: ``has`` (it applies), ``value`` and ``units``."""

    __slots__ = ("has", "units", "value")

    def __init__(self) -> None:
        self.has = bytearray()
        self.value = array("d")
        self.units = array("q")


def columns_of(metrics: Iterable[ScoredMetric]) -> list[_ColumnKey]:
    """The ``(metric, measure)`` pair of every measure of ``metrics``."""
    return [(m.name, d) for m in metrics for d in m.measures]


def _typed_columns(model: type[BaseModel]) -> dict[str, array[Any]]:
    """A column per field of ``model``: floats as doubles, counts as 64-bit integers."""
    return {f: array("d" if i.annotation is float else "q") for f, i in model.model_fields.items()}


class StepScoreTable:
    """Rows of episodes' step scores (``add``) for the ``(metric, measure)`` pairs ``columns``
    (``columns_of(metrics)``: every measure of some metrics)."""

    def __init__(self, columns: Iterable[_ColumnKey]) -> None:
        self._columns: dict[_ColumnKey, _Column] = {key: _Column() for key in columns}
        self.task_ids: list[str] = []
        self.trials = array("q")
        self.infra = bytearray()
        self.efficiency = _typed_columns(Efficiency)
        self.tree = _typed_columns(TreeStats)
        self._ids: dict[str, str] = {}

    @classmethod
    def of(
        cls, episodes: Iterable[EpisodeStepScores], columns: Iterable[_ColumnKey]
    ) -> StepScoreTable:
        table = cls(columns)
        for e in episodes:
            table.add(e)
        return table

    def __len__(self) -> int:
        return len(self.task_ids)

    def add(self, e: EpisodeStepScores) -> None:
        """One episode's row (its task id kept once for all its episodes)."""
        self.task_ids.append(self._ids.setdefault(e.scenario_id, e.scenario_id))
        self.trials.append(e.trial)
        self.infra.append(e.infra_error)
        for (metric, measure), column in self._columns.items():
            m = e.metrics.get(metric, {}).get(measure)
            applies = m is not None and m.value is not None
            column.has.append(applies)
            column.value.append(m.value if m is not None and m.value is not None else 0.0)
            column.units.append(m.n if m is not None else 0)
        for f, values in self.efficiency.items():
            values.append(getattr(e.efficiency, f))
        for f, values in self.tree.items():
            values.append(getattr(e.tree, f))

    def reorder(self, order: Sequence[int]) -> None:
        """Put the rows in ``order`` (row indices), one column at a time (a second copy of the
        whole table is never made)."""
        self.task_ids = [self.task_ids[i] for i in order]
        self.trials = array("q", (self.trials[i] for i in order))
        self.infra = bytearray(self.infra[i] for i in order)
        for column in self._columns.values():
            column.has = bytearray(column.has[i] for i in order)
            column.value = array("d", (column.value[i] for i in order))
            column.units = array("q", (column.units[i] for i in order))
        for columns in (self.efficiency, self.tree):
            for f, values in columns.items():
                columns[f] = array(values.typecode, (values[i] for i in order))

    # -- summaries -------------------------------------------------------------------------------

    def _scored_rows(self) -> list[int]:
        return [i for i, infra in enumerate(self.infra) if not infra]

    def measure_summaries(
        self, metrics: Sequence[ScoredMetric], rows: Sequence[int] | None = None
    ) -> dict[str, DimensionSummary]:
        """Per measure of ``metrics``: the mean over ``rows`` (default all) where it applies (a
        pooled measure: over their units, ``StepMetric.pooled``)."""
        rows = range(len(self)) if rows is None else rows
        dims: dict[str, DimensionSummary] = {}
        for metric in metrics:
            for d in metric.measures:
                column = self._columns.get((metric.name, d)) or _Column()
                applicable = [i for i in rows if column.has[i]]
                units = sum(column.units[i] for i in applicable)
                values = column.value
                if metric.is_pooled(d):
                    total = sum(values[i] * column.units[i] for i in applicable)
                    mean = total / units if units else None
                else:
                    total = sum(values[i] for i in applicable)
                    mean = total / len(applicable) if applicable else None
                dims[d] = DimensionSummary(mean=mean, n=len(applicable), units=units)
        return dims

    def summary(self, metrics: Sequence[ScoredMetric]) -> StepScoresSummary:
        """Means per measure of ``metrics`` over the rows where it applies, infra errors left
        out; and the mean cost and tree of the rows that count."""
        scored = self._scored_rows()
        count = len(scored)
        eff_total = {f: float(sum(col[i] for i in scored)) for f, col in self.efficiency.items()}
        eff_mean = {f: (v / count if count else 0.0) for f, v in eff_total.items()}
        tree_mean = {
            f: (sum(col[i] for i in scored) / count if count else 0.0)
            for f, col in self.tree.items()
        }
        return StepScoresSummary(
            episodes=len(self),
            scored=count,
            excluded_infra=len(self) - count,
            dimensions=self.measure_summaries(metrics, scored),
            efficiency=eff_mean,
            efficiency_total=eff_total,
            tree=tree_mean,
        )

    def points(self, metric: str, measure: str, *, pooled: bool = False) -> list[tuple[str, float]]:
        """``(task id, value)`` per row where ``metric``'s ``measure`` applies (no infra
        errors); ``pooled``: the value once per unit."""
        column = self._columns.get((metric, measure))
        if column is None:
            return []
        out: list[tuple[str, float]] = []
        for i, applies in enumerate(column.has):
            if applies and not self.infra[i]:
                out += [(self.task_ids[i], column.value[i])] * (column.units[i] if pooled else 1)
        return out
