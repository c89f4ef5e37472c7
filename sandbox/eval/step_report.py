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
from sandbox.eval.steps.metric import ScoredMetric
from sandbox.eval.steps.reason_score import ThoughtSimilarity, similarity_label, thought_similarity
from sandbox.eval.steps.selection import ChosenProtocol
from sandbox.eval.steps.step_scores import (
    DimensionSummary,
    EpisodeStepScores,
    measure_points,
    score_episodes,
    summarise,
    summarise_measures,
)

__all__ = ["MetricReport", "StepReport", "step_reports"]


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
    episodes: Sequence[EpisodeStepScores], metrics: Sequence[ScoredMetric], seed: int
) -> dict[str, Interval]:
    """An interval per measure; a pooled measure's resamples are pooled means (each episode's
    value once per unit), its ``n`` still the episodes."""
    out = {}
    for metric in metrics:
        for d in metric.measures:
            pooled = metric.is_pooled(d)
            points = measure_points(episodes, metric.name, d, pooled=pooled)
            iv = bootstrap_ci([v for _, v in points], seed=seed, clusters=[t for t, _ in points])
            if pooled:
                iv.n = len(measure_points(episodes, metric.name, d))
            out[d] = iv
    return out


def _report(
    chosen: ChosenProtocol, episodes: Sequence[EpisodeStepScores], seed: int, label: str
) -> StepReport:
    scored = [e for e in episodes if not e.infra_error]
    added = {
        m.name: MetricReport(
            options=m.options.model_dump(mode="json"),
            dimensions=summarise_measures(scored, [m]),
            intervals=_intervals(episodes, [m], seed),
        )
        for m in chosen.extra
    }
    return StepReport(
        summary=summarise(episodes, chosen.own).model_dump(mode="json"),
        intervals=_intervals(episodes, chosen.own, seed),
        reason_similarity=label if any(m.metric.similarity for m in chosen.metrics) else "",
        metrics=added,
    )


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
    by_id = {t.id: t for t in tasks}
    kept = [t for t in trajs if t.scenario_id in by_id]
    # the documented default (``--reason-similarity auto``) wherever a run is scored, so a run's
    # own scores and those of ``sandbox eval`` say the same
    similarity = similarity or thought_similarity("auto")
    metrics = list({m.name: m for c in chosen for m in c.metrics}.values())
    episodes = score_episodes(kept, by_id, suite.apis, similarity=similarity, metrics=metrics)
    label = similarity_label(similarity)
    return {c.name: _report(c, episodes, seed, label) for c in chosen}
