"""The step-level part of a run's scores: one ``StepReport`` per step protocol.

``step_reports`` scores every episode once with the metrics of every chosen step protocol
(``sandbox.eval.steps.selection``) and summarises each protocol apart: its own metrics' measures
(``summary``, and a task-clustered bootstrap interval each, ``intervals``) and, under
``metrics``, each added metric (``--step-metric``) with its options. The ``default`` protocol's
report is ``scores.json``'s ``step_scores``, as it always was. May import ``eval`` modules.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from agents.trajectory import Trajectory
from mock_tools.models import Task
from mock_tools.suite import Suite
from sandbox.eval.omit_empty import OmitEmpty
from sandbox.eval.stats import Interval, bootstrap_ci
from sandbox.eval.steps.episode import ScoringContext
from sandbox.eval.steps.metric import ScoredMetric
from sandbox.eval.steps.reason_score import ThoughtSimilarity, similarity_label, thought_similarity
from sandbox.eval.steps.score_table import StepScoreTable, columns_of
from sandbox.eval.steps.selection import ChosenProtocol
from sandbox.eval.steps.step_scores import DimensionSummary, score_episode
from sandbox.store.gc_pause import paused_gc

__all__ = ["MetricReport", "StepReport", "StepScorer", "step_reports"]


class MetricReport(BaseModel):
    """A step metric added to a protocol's set (``--step-metric``): its options and scores."""

    options: dict[str, Any] = Field(default_factory=dict)
    dimensions: dict[str, DimensionSummary]
    intervals: dict[str, Interval]


class StepReport(OmitEmpty):
    """One step protocol's summary (``sandbox.eval.steps.step_scores``) and an interval per
    measure; the metrics added to it under ``metrics`` (left out of the JSON when none)."""

    omit_when_empty = ("metrics",)

    summary: dict[str, Any]
    intervals: dict[str, Interval]
    reason_similarity: str = Field(
        default="lexical",
        description="How texts were compared (reason; T-Eval's embedding cosines); empty when "
        "no metric of the protocol compares texts.",
    )
    metrics: dict[str, MetricReport] = Field(
        default_factory=dict, description="Added step metrics' scores, by metric name."
    )


def _intervals(
    table: StepScoreTable, metrics: Sequence[ScoredMetric], seed: int
) -> dict[str, Interval]:
    """An interval per measure; a pooled measure's resamples are pooled means (each episode's
    value once per unit), its ``n`` still the episodes."""
    out = {}
    for metric in metrics:
        for d in metric.measures:
            pooled = metric.is_pooled(d)
            points = table.points(metric.name, d, pooled=pooled)
            iv = bootstrap_ci([v for _, v in points], seed=seed, clusters=[t for t, _ in points])
            if pooled:
                iv.n = len(table.points(metric.name, d))
            out[d] = iv
    return out


def _report(chosen: ChosenProtocol, table: StepScoreTable, seed: int, label: str) -> StepReport:
    scored = [i for i, infra in enumerate(table.infra) if not infra]
    added = {
        m.name: MetricReport(
            options=m.options.model_dump(mode="json"),
            dimensions=table.measure_summaries([m], scored),
            intervals=_intervals(table, [m], seed),
        )
        for m in chosen.extra
    }
    return StepReport(
        summary=table.summary(chosen.own).model_dump(mode="json"),
        intervals=_intervals(table, chosen.own, seed),
        reason_similarity=label if any(m.metric.similarity for m in chosen.metrics) else "",
        metrics=added,
    )


class StepScorer:
    """The step reports of a run, scored one episode at a time (``add``): each episode is
    reduced to a row of a ``StepScoreTable`` and nothing of its trajectory is kept."""

    def __init__(
        self,
        tasks: Sequence[Task],
        suite: Suite,
        chosen: Sequence[ChosenProtocol],
        similarity: ThoughtSimilarity | None = None,
    ) -> None:
        self.chosen = list(chosen)
        self._by_id = {t.id: t for t in tasks}
        # the documented default (``--reason-similarity auto``) wherever a run is scored, so a
        # run's own scores and those of ``sandbox eval`` say the same
        self.similarity = similarity or thought_similarity("auto")
        self._metrics = list({m.name: m for c in chosen for m in c.metrics}.values())
        self._context = ScoringContext(suite.apis, self.similarity)
        self.table = StepScoreTable(columns_of(self._metrics))

    def add(self, traj: Trajectory) -> bool:
        """Score one episode into the table; False (and nothing kept) when its task is not
        one of ``tasks``."""
        task = self._by_id.get(traj.scenario_id)
        if task is None:
            return False
        ctx = self._context
        self.table.add(score_episode(traj, task, ctx.apis, context=ctx, metrics=self._metrics))
        return True

    def reports(self, seed: int, order: Sequence[int] | None = None) -> dict[str, StepReport]:
        """The ``StepReport`` of every chosen step protocol, by its name, over the rows put in
        ``order`` (row indices; default: as added)."""
        table = self.table
        if order is not None:
            table.reorder(order)
        label = similarity_label(self.similarity)
        return {c.name: _report(c, table, seed, label) for c in self.chosen}


def step_reports(
    trajs: Sequence[Trajectory],
    tasks: Sequence[Task],
    suite: Suite,
    seed: int,
    chosen: Sequence[ChosenProtocol],
    similarity: ThoughtSimilarity | None = None,
) -> dict[str, StepReport]:
    """The ``StepReport`` of every chosen step protocol, by its name (trajectories of tasks not
    in ``tasks`` left out)."""
    scorer = StepScorer(tasks, suite, chosen, similarity)
    with paused_gc():
        for traj in trajs:
            scorer.add(traj)
    return scorer.reports(seed)
