"""The project's step metrics and the ``default`` step protocol that groups them.

=============  =====================================================  ============================
metric         measures                                               module
=============  =====================================================  ============================
``instruct``   ``instruct``: well-formed turns, every turn of the tree  ``format_score``
``selection``  ``selection_precision`` / ``_recall`` / ``_f1``         ``tool_selection``
``understand`` ``understand_exact``, ``understand_kv``                ``arg_scores``
``plan``       ``plan_precision`` / ``_recall`` / ``_f1``              ``plan_score``
``reason``     ``reason``: thought similarity at matched steps          ``reason_score``
``review``     ``review_recovery``, ``review_no_repeat``               ``review_score``
=============  =====================================================  ============================

Every metric but ``instruct`` reads the chosen path. The reference-based ones (``understand``,
``plan``, ``reason``) do not apply to a task whose reference has no steps; ``selection`` applies
whenever the reference names APIs; ``review`` to episodes with a failed call. docs/evaluation.md
defines each. Importing this module registers them (``sandbox.eval.steps.metric``); the
registries are re-exported from here, so reading them through it finds the built-ins.
"""

from __future__ import annotations

from sandbox.eval.steps.arg_scores import score_arguments
from sandbox.eval.steps.episode import StepEpisode
from sandbox.eval.steps.format_score import format_alignment
from sandbox.eval.steps.measure import Measure
from sandbox.eval.steps.metric import (
    DEFAULT_STEP_PROTOCOL,
    STEP_METRICS,
    STEP_PROTOCOLS,
    NoOptions,
    StepMetric,
    StepProtocol,
    register_step_metric,
    register_step_protocol,
)
from sandbox.eval.steps.plan_score import plan_score
from sandbox.eval.steps.reason_score import score_reasoning
from sandbox.eval.steps.review_score import review_scores
from sandbox.eval.steps.tool_selection import tool_selection

__all__ = ["DEFAULT_METRICS", "STEP_METRICS", "STEP_PROTOCOLS"]


def instruct(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    ctx = episode.context
    measure = format_alignment(episode.traj.nodes, episode.offered, ctx.resolver, ctx.validators)
    return {"instruct": measure}


def selection(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    s = tool_selection(episode.actions, episode.task.reference.apis())
    return {"selection_precision": s.precision, "selection_recall": s.recall, "selection_f1": s.f1}


def understand(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    if not episode.gold:
        return {}
    exact, kv = score_arguments(episode.actions, episode.gold, episode.pairs)
    return {"understand_exact": exact, "understand_kv": kv}


def plan(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    if not episode.gold:
        return {}
    p = plan_score(episode.actions, episode.gold, memo=episode.context.matchings)
    return {
        "plan_precision": Measure(value=p.precision, n=p.n_pred),
        "plan_recall": Measure(value=p.recall, n=p.n_gold),
        "plan_f1": Measure(value=p.f1, n=1),
    }


def reason(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    if not episode.gold:
        return {}
    similarity = episode.context.similarity
    return {"reason": score_reasoning(episode.actions, episode.gold, episode.pairs, similarity)}


def review(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    r = review_scores(episode.actions, episode.traj.status)
    return {"review_recovery": r.recovery, "review_no_repeat": r.no_blind_repeat}


DEFAULT_METRICS: tuple[StepMetric, ...] = (
    StepMetric(
        "instruct",
        "share of the model's turns that made a well-formed call",
        ("instruct",),
        instruct,
    ),
    StepMetric(
        "selection",
        "precision, recall and F1 of the APIs called against the reference's",
        ("selection_precision", "selection_recall", "selection_f1"),
        selection,
        headline="selection_f1",
    ),
    StepMetric(
        "understand",
        "argument values of each reference step reproduced (exact; key-value similarity)",
        ("understand_exact", "understand_kv"),
        understand,
        headline="understand_kv",
    ),
    StepMetric(
        "plan",
        "plan precision, recall and F1 of the executed steps (T-Eval's algorithm, fixed)",
        ("plan_precision", "plan_recall", "plan_f1"),
        plan,
        headline="plan_f1",
    ),
    StepMetric(
        "reason",
        "thought similarity at the steps matched to the reference",
        ("reason",),
        reason,
        similarity=True,
    ),
    StepMetric(
        "review",
        "after a failed call: reached an answer; did not repeat the failing call blindly",
        ("review_recovery", "review_no_repeat"),
        review,
        headline="review_recovery",
    ),
)

for _metric in DEFAULT_METRICS:
    register_step_metric(_metric)
register_step_protocol(
    StepProtocol(
        DEFAULT_STEP_PROTOCOL,
        "the project's definitions, docs/evaluation.md",
        tuple(m.name for m in DEFAULT_METRICS),
    )
)

from sandbox.eval.steps import reference_protocols  # noqa: E402, F401  (registers teval, ...)
