"""Step-level scores of episodes (T-Eval / ToolEyes / UltraTool style), per episode and per run.

Entry points (pure functions, no I/O)::

    score_episode(traj, task, apis, metrics=) -> EpisodeStepScores
    score_run(trajs, tasks_by_id, apis, metrics=) -> StepScoresSummary

``metrics`` are step metrics with their options (``ScoredMetric``, ``sandbox.eval.steps.metric``);
without them, those of the ``default`` step protocol (``default_metrics``). Every measure is a
``Measure`` (value in [0, 1] or None when not applicable, and the number of units behind it);
an episode keeps each metric's measures under the metric's name. Beside them the engine describes
every episode's cost (``efficiency``) and search (``tree``: nodes, backtracks, depth).

The run summary averages each measure over the episodes where it applies (a macro mean: each
episode weighs the same) and says how many episodes (``n``) and units (``units``) are behind it.
Episodes that ended on an infrastructure error (the model endpoint failed; not the agent's fault)
are scored but left out of the means and counted in ``excluded_infra``.
Pure; imports ``eval.steps`` modules.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.errors import RunError
from sandbox.eval.steps import default_metrics
from sandbox.eval.steps.actions import Apis
from sandbox.eval.steps.efficiency import Efficiency, TreeStats, efficiency, tree_stats
from sandbox.eval.steps.episode import ScoringContext, StepEpisode
from sandbox.eval.steps.metric import ScoredMetric
from sandbox.eval.steps.reason_score import ThoughtSimilarity
from sandbox.eval.steps.score_table import (
    DimensionSummary,
    EpisodeStepScores,
    StepScoresSummary,
    StepScoreTable,
    columns_of,
)
from sandbox.store.gc_pause import paused_gc

__all__ = [
    "DIMENSIONS",
    "DimensionSummary",
    "EpisodeStepScores",
    "ScoringContext",
    "StepScoresSummary",
    "default_scored_metrics",
    "dimension_points",
    "dimension_values",
    "measure_points",
    "score_episode",
    "score_episodes",
    "score_run",
    "summarise",
    "summarise_measures",
]

DEFAULT_SCORED: tuple[ScoredMetric, ...] = tuple(
    ScoredMetric(m) for m in default_metrics.DEFAULT_METRICS
)
DIMENSIONS: tuple[str, ...] = tuple(d for m in DEFAULT_SCORED for d in m.metric.measures)
"""The ``default`` step protocol's measures, in report order."""

EFFICIENCY_FIELDS: tuple[str, ...] = tuple(Efficiency.model_fields)
TREE_FIELDS: tuple[str, ...] = tuple(TreeStats.model_fields)


def default_scored_metrics() -> tuple[ScoredMetric, ...]:
    """The ``default`` step protocol's metrics, with their default options."""
    return DEFAULT_SCORED


def score_episode(
    traj: Trajectory,
    task: Task,
    apis: Apis,
    *,
    context: ScoringContext | None = None,
    metrics: Sequence[ScoredMetric] | None = None,
) -> EpisodeStepScores:
    """The step-level scores of one episode against its task's reference: each of ``metrics``
    (default: the ``default`` step protocol's), its cost and its search tree."""
    episode = StepEpisode(traj, task, context or ScoringContext(apis))
    return EpisodeStepScores(
        scenario_id=traj.scenario_id,
        trial=traj.trial,
        status=traj.status,
        infra_error=traj.infra_error,
        metrics={
            m.name: m.measure(episode) for m in (DEFAULT_SCORED if metrics is None else metrics)
        },
        efficiency=efficiency(traj, episode.actions),
        tree=tree_stats(traj, episode.path),
    )


def summarise_measures(
    episodes: Sequence[EpisodeStepScores], metrics: Sequence[ScoredMetric]
) -> dict[str, DimensionSummary]:
    """Per measure of ``metrics``: the mean over the ``episodes`` where it applies (a pooled
    measure: over their units, ``StepMetric.pooled``)."""
    return StepScoreTable.of(episodes, columns_of(metrics)).measure_summaries(metrics)


def summarise(
    episodes: Iterable[EpisodeStepScores], metrics: Sequence[ScoredMetric] = DEFAULT_SCORED
) -> StepScoresSummary:
    """Means per measure of ``metrics`` (default: the ``default`` step protocol's) over the
    episodes where it applies, infra errors left out; and the episodes' mean cost and tree
    (``score_table.StepScoreTable.summary``)."""
    return StepScoreTable.of(episodes, columns_of(metrics)).summary(metrics)


def score_episodes(
    trajs: Iterable[Trajectory],
    tasks_by_id: Mapping[str, Task],
    apis: Apis,
    *,
    similarity: ThoughtSimilarity | None = None,
    metrics: Sequence[ScoredMetric] | None = None,
) -> list[EpisodeStepScores]:
    """Score every trajectory of a run. RunError for a scenario id the suite does not have."""
    ctx = ScoringContext(apis, similarity)
    episodes = []
    with paused_gc():
        for traj in trajs:
            task = tasks_by_id.get(traj.scenario_id)
            if task is None:
                raise RunError(
                    f"trajectory of scenario {traj.scenario_id!r} has no task in the suite; "
                    "evaluate the run against the suite it was made with"
                )
            episodes.append(score_episode(traj, task, apis, context=ctx, metrics=metrics))
    return episodes


def score_run(
    trajs: Iterable[Trajectory],
    tasks_by_id: Mapping[str, Task],
    apis: Apis,
    *,
    similarity: ThoughtSimilarity | None = None,
    metrics: Sequence[ScoredMetric] | None = None,
) -> StepScoresSummary:
    """``summarise(score_episodes(...))``."""
    chosen = DEFAULT_SCORED if metrics is None else metrics
    episodes = score_episodes(trajs, tasks_by_id, apis, similarity=similarity, metrics=chosen)
    return summarise(episodes, chosen)


def measure_points(
    episodes: Iterable[EpisodeStepScores], metric: str, measure: str, *, pooled: bool = False
) -> list[tuple[str, float]]:
    """``(task id, value)`` per episode where ``metric``'s ``measure`` applies (no infra
    errors): the task is the cluster of a task-clustered interval. ``pooled``: the value once
    per unit, so the mean of any set of points is the pooled mean of their episodes."""
    table = StepScoreTable.of(episodes, [(metric, measure)])
    return table.points(metric, measure, pooled=pooled)


def dimension_points(
    episodes: Iterable[EpisodeStepScores], dimension: str
) -> list[tuple[str, float]]:
    """``measure_points`` of a measure by its name alone (the first metric that has it)."""
    eps = list(episodes)
    owner = next((n for e in eps for n, ms in e.metrics.items() if dimension in ms), None)
    if owner is None:
        known = sorted({d for e in eps for d in e.dimensions()} or DIMENSIONS)
        raise KeyError(f"unknown step dimension {dimension!r}; known: {', '.join(known)}")
    return measure_points(eps, owner, dimension)


def dimension_values(episodes: Iterable[EpisodeStepScores], dimension: str) -> list[float]:
    """Per-episode values of a dimension where it applies (no infra errors), for intervals."""
    return [v for _, v in dimension_points(episodes, dimension)]
