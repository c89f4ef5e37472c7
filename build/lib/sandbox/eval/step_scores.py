"""Step-level scores of episodes (T-Eval / ToolEyes / UltraTool style), per episode and per run.

Entry points (pure functions, no I/O)::

    score_episode(traj, task, apis) -> EpisodeStepScores
    score_run(trajs, tasks_by_id, apis) -> StepScoresSummary

Every dimension is a ``Measure`` (value in [0, 1] or None when not applicable, and the number of
units behind it). Which nodes each dimension looks at:

- ``instruct``: every model turn of the tree (``format_score``);
- everything else: the chosen path (``actions.episode_path``), so DFSDT is scored on the branch it
  answered with, and its search is described by ``tree`` (nodes, backtracks, depth).

The reference-based dimensions (``understand_*``, ``plan_*``, ``reason``) do not apply to a task
whose reference has no steps (an unsolvable task without a path); ``selection_*`` applies whenever
the reference names APIs. ``review_*`` applies to episodes with at least one failed call.

The run summary averages each dimension over the episodes where it applies (a macro mean: each
episode weighs the same) and says how many episodes (``n``) and units (``units``) are behind it.
Episodes that ended on an infrastructure error (the model endpoint failed; not the agent's fault)
are scored but left out of the means and counted in ``excluded_infra``.
Pure; imports ``eval`` modules only.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from pydantic import BaseModel, Field

from agents.trajectory import Status, Trajectory
from mock_tools.models import Task
from mock_tools.names import NameResolver
from sandbox.errors import RunError
from sandbox.eval.actions import (
    Action,
    ApiKey,
    Apis,
    actions_of,
    episode_path,
    match_actions,
    reference_actions,
)
from sandbox.eval.arg_scores import score_arguments
from sandbox.eval.efficiency import Efficiency, TreeStats, efficiency, tree_stats
from sandbox.eval.format_score import SchemaValidators, format_alignment
from sandbox.eval.matching import MatchMemo
from sandbox.eval.measure import Measure
from sandbox.eval.plan_score import PlanScore, plan_score
from sandbox.eval.reason_score import ThoughtSimilarity, score_reasoning
from sandbox.eval.review_score import review_scores
from sandbox.eval.tool_selection import tool_selection
from sandbox.store.gc_pause import paused_gc

__all__ = [
    "DIMENSIONS",
    "DimensionSummary",
    "EpisodeStepScores",
    "ScoringContext",
    "StepScoresSummary",
    "dimension_points",
    "dimension_values",
    "score_episode",
    "score_episodes",
    "score_run",
    "summarise",
]

DIMENSIONS: tuple[str, ...] = (
    "instruct",
    "selection_precision",
    "selection_recall",
    "selection_f1",
    "understand_exact",
    "understand_kv",
    "plan_precision",
    "plan_recall",
    "plan_f1",
    "reason",
    "review_recovery",
    "review_no_repeat",
)
"""The step-level dimensions, in report order (each a field of ``EpisodeStepScores``)."""

EFFICIENCY_FIELDS: tuple[str, ...] = tuple(Efficiency.model_fields)
TREE_FIELDS: tuple[str, ...] = tuple(TreeStats.model_fields)


class EpisodeStepScores(BaseModel):
    scenario_id: str
    trial: int = 0
    status: Status
    infra_error: bool = False
    instruct: Measure
    selection_precision: Measure
    selection_recall: Measure
    selection_f1: Measure
    understand_exact: Measure
    understand_kv: Measure
    plan_precision: Measure
    plan_recall: Measure
    plan_f1: Measure
    reason: Measure
    review_recovery: Measure
    review_no_repeat: Measure
    plan: PlanScore | None = Field(default=None, description="Plan details (matched, in order).")
    failures: int = Field(default=0, description="Failed calls on the chosen path.")
    repeats_after_failure: int = 0
    efficiency: Efficiency
    tree: TreeStats

    def dimensions(self) -> dict[str, Measure]:
        return {d: getattr(self, d) for d in DIMENSIONS}


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


class ScoringContext:
    """What scoring many episodes of one suite shares: name resolution and schema validators."""

    def __init__(self, apis: Apis, similarity: ThoughtSimilarity | None = None) -> None:
        self.apis = apis
        self.resolver = NameResolver.for_apis(apis)
        self.validators = SchemaValidators(apis)
        self.similarity = similarity
        self._gold: dict[str, tuple[Task, list[Action]]] = {}
        self.matchings: MatchMemo = {}

    def gold(self, task: Task) -> list[Action]:
        """The task's reference steps as actions (made once per task object)."""
        kept = self._gold.get(task.id)
        if kept is None or kept[0] is not task:
            kept = self._gold[task.id] = (task, reference_actions(task.reference.steps, self.apis))
        return kept[1]


def score_episode(
    traj: Trajectory,
    task: Task,
    apis: Apis,
    *,
    context: ScoringContext | None = None,
) -> EpisodeStepScores:
    """All step-level scores of one episode against its task's reference."""
    ctx = context or ScoringContext(apis)
    path = episode_path(traj)
    pred = actions_of(path, ctx.apis, ctx.resolver)
    offered: set[ApiKey] = {(r.tool, r.api) for r in task.tools if (r.tool, r.api) in ctx.apis}

    instruct = format_alignment(traj.nodes, offered, ctx.resolver, ctx.validators)
    selection = tool_selection(pred, task.reference.apis())

    none = Measure()
    exact = kv = precision = recall = plan_f1 = reason = none
    plan: PlanScore | None = None
    if task.reference.steps:
        gold = ctx.gold(task)
        pairs = match_actions(pred, gold, memo=ctx.matchings)
        exact, kv = score_arguments(pred, gold, pairs)
        plan = plan_score(pred, gold, memo=ctx.matchings)
        precision = Measure(value=plan.precision, n=plan.n_pred)
        recall = Measure(value=plan.recall, n=plan.n_gold)
        plan_f1 = Measure(value=plan.f1, n=1)
        reason = score_reasoning(pred, gold, pairs, ctx.similarity)

    review = review_scores(pred, traj.status)
    return EpisodeStepScores(
        scenario_id=traj.scenario_id,
        trial=traj.trial,
        status=traj.status,
        infra_error=traj.infra_error,
        instruct=instruct,
        selection_precision=selection.precision,
        selection_recall=selection.recall,
        selection_f1=selection.f1,
        understand_exact=exact,
        understand_kv=kv,
        plan_precision=precision,
        plan_recall=recall,
        plan_f1=plan_f1,
        reason=reason,
        review_recovery=review.recovery,
        review_no_repeat=review.no_blind_repeat,
        plan=plan,
        failures=review.failures,
        repeats_after_failure=review.repeats_after_failure,
        efficiency=efficiency(traj, pred),
        tree=tree_stats(traj, path),
    )


def summarise(episodes: Iterable[EpisodeStepScores]) -> StepScoresSummary:
    """Means per dimension over the episodes where it applies (infra errors left out)."""
    all_eps = list(episodes)
    scored = [e for e in all_eps if not e.infra_error]
    dims: dict[str, DimensionSummary] = {}
    for d in DIMENSIONS:
        measures = [m for m in (getattr(e, d) for e in scored) if m.value is not None]
        mean = sum(m.value for m in measures) / len(measures) if measures else None
        dims[d] = DimensionSummary(mean=mean, n=len(measures), units=sum(m.n for m in measures))
    eff_total = {f: float(sum(getattr(e.efficiency, f) for e in scored)) for f in EFFICIENCY_FIELDS}
    count = len(scored)
    eff_mean = {f: (v / count if count else 0.0) for f, v in eff_total.items()}
    tree_mean = {
        f: (sum(getattr(e.tree, f) for e in scored) / count if count else 0.0) for f in TREE_FIELDS
    }
    return StepScoresSummary(
        episodes=len(all_eps),
        scored=count,
        excluded_infra=len(all_eps) - count,
        dimensions=dims,
        efficiency=eff_mean,
        efficiency_total=eff_total,
        tree=tree_mean,
    )


def score_episodes(
    trajs: Iterable[Trajectory],
    tasks_by_id: Mapping[str, Task],
    apis: Apis,
    *,
    similarity: ThoughtSimilarity | None = None,
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
            episodes.append(score_episode(traj, task, apis, context=ctx))
    return episodes


def score_run(
    trajs: Iterable[Trajectory],
    tasks_by_id: Mapping[str, Task],
    apis: Apis,
    *,
    similarity: ThoughtSimilarity | None = None,
) -> StepScoresSummary:
    """``summarise(score_episodes(...))``."""
    return summarise(score_episodes(trajs, tasks_by_id, apis, similarity=similarity))


def dimension_values(episodes: Iterable[EpisodeStepScores], dimension: str) -> list[float]:
    """Per-episode values of a dimension where it applies (no infra errors), for intervals."""
    return [v for _, v in dimension_points(episodes, dimension)]


def dimension_points(
    episodes: Iterable[EpisodeStepScores], dimension: str
) -> list[tuple[str, float]]:
    """``(task id, value)`` per episode where the dimension applies: the task is the cluster of
    a task-clustered interval."""
    if dimension not in DIMENSIONS:
        raise KeyError(f"unknown step dimension {dimension!r}; known: {', '.join(DIMENSIONS)}")
    out = []
    for e in episodes:
        value = getattr(e, dimension).value
        if not e.infra_error and value is not None:
            out.append((e.scenario_id, value))
    return out
