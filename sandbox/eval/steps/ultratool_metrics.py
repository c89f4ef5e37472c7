"""The ``ultratool`` step protocol: UltraTool's tool-usage and tool-selection arithmetic.

UltraTool scores a model's filled-in plan: each reference step (a label, a tool and its
parameters) against the predicted record with the same label (``sandbox.eval.benchmarks.
ultratool``). On an episode the labels are **positions**: the ``k``-th call of the chosen path
(``Finish`` left out) is the record labelled ``k+1``, reference step ``k`` the gold labelled
``k+1``; the record's ``tool`` is the function called, its ``param`` the arguments as written
(read as JSON; the text itself when they are no JSON, which scores 0 as a non-object does).

- ``ultratool-usage``: ``tool_usage``, UltraTool's argument accuracy (``cal_param_res``), pooled
  over reference steps (its flat mean over all steps of all samples);
- ``ultratool-selection``: ``tool_selection_global`` (the episode's tools all equal the
  reference's, in order; a mean over episodes) and ``tool_selection_local`` (equal tools over all
  reference steps, pooled) (``cal_acc_for_select``).

UltraTool's tool-usage awareness asks, per plan step, whether it needs a tool; every reference
step of a suite is a call, so on an episode it would only count how many calls were made: it is
read from UltraTool's own files (``sandbox rescore --ultratool``), not from episodes. A task
without reference steps is no UltraTool sample (not applicable; UltraTool's own code would count
it as one step scoring 0). May import ``eval.steps`` and ``eval.benchmarks`` modules.
"""

from __future__ import annotations

from typing import Any

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.ultratool import param_scores, select_lists
from sandbox.eval.steps.episode import StepEpisode
from sandbox.eval.steps.measure import Measure, mean_measure
from sandbox.eval.steps.metric import NoOptions, StepMetric, StepProtocol
from sandbox.eval.steps.replies import parsed

__all__ = ["ULTRATOOL_METRICS", "ULTRATOOL_PROTOCOL", "ultratool_records"]


def ultratool_records(episode: StepEpisode) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``(predicted records, reference records)`` of an episode, labelled by position."""
    pred = [
        {"step": str(k + 1), "tool": c.name, "param": parsed(c.arguments)}
        for k, c in enumerate(episode.written_calls)
    ]
    gold = [
        {"step": str(k + 1), "tool": g.name, "param": g.args}
        for k, g in enumerate(episode.gold_steps)
    ]
    return pred, gold


def ultratool_usage(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    if not episode.gold_steps:
        return {}
    pred, gold = ultratool_records(episode)
    try:
        return {"tool_usage": mean_measure(param_scores(pred, gold))}
    except NoReferenceValue:
        return {}


def ultratool_selection(episode: StepEpisode, options: NoOptions) -> dict[str, Measure]:
    if not episode.gold_steps:
        return {}
    pred, gold = ultratool_records(episode)
    chosen, wanted = select_lists(pred, gold)
    hits = sum(1 for p, g in zip(chosen, wanted, strict=True) if p == g)
    return {
        "tool_selection_global": Measure(value=1.0 if chosen == wanted else 0.0, n=1),
        "tool_selection_local": Measure(value=hits / len(wanted), n=len(wanted)),
    }


ULTRATOOL_METRICS: tuple[StepMetric, ...] = (
    StepMetric(
        "ultratool-usage",
        "UltraTool's argument accuracy of the k-th call against reference step k",
        ("tool_usage",),
        ultratool_usage,
        pooled=("tool_usage",),
    ),
    StepMetric(
        "ultratool-selection",
        "UltraTool's tool selection: all tools right (global), each tool right (local)",
        ("tool_selection_global", "tool_selection_local"),
        ultratool_selection,
        pooled=("tool_selection_local",),
        headline="tool_selection_local",
    ),
)

ULTRATOOL_PROTOCOL = StepProtocol(
    "ultratool",
    "UltraTool's tool usage and tool selection, by position on the chosen path",
    tuple(m.name for m in ULTRATOOL_METRICS),
)
