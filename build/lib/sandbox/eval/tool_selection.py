"""Tool selection (``selection_*``): precision and recall of the APIs an episode called.

Not T-Eval's ``retrieve``, which is the choice of the *next* tool given the gold history (that
one is asked in probe mode, ``sandbox probe``, ``probe.py``). This is the project's own
episode-level measure, against ToolBench's ``relevant APIs`` label of a query (ToolLLM, Qin et al.
2023, §2.2: the APIs a solution needs) or, without one, the reference path's APIs.

The sets compared are distinct ``(tool, api)`` pairs: the APIs the agent called on the chosen
path (failed calls included: choosing the API is what is measured, not its outcome; calls to
unknown functions count as wrong selections) against ``task.reference.apis()`` (the task's
``relevant_apis`` when given, else the reference steps' APIs).

- precision = |called ∩ reference| / |called|; not applicable when nothing was called;
- recall = |called ∩ reference| / |reference|;
- F1 of the two (0 when nothing was called).

When the reference names no API (an unsolvable task without a path) the dimension does not apply.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel

from sandbox.eval.actions import Action, ApiKey
from sandbox.eval.measure import Measure, f1

__all__ = ["ToolSelection", "tool_selection"]


class ToolSelection(BaseModel):
    precision: Measure
    recall: Measure
    f1: Measure


def tool_selection(called: Iterable[Action], reference: Iterable[ApiKey]) -> ToolSelection:
    """P/R/F1 of the distinct APIs called (unknown names included) against the reference."""
    gold = set(reference)
    if not gold:
        return ToolSelection(precision=Measure(), recall=Measure(), f1=Measure())
    calls = list(called)
    known = {c.key for c in calls if c.key is not None}
    unknown = {c.name for c in calls if c.key is None}
    n_called = len(known) + len(unknown)
    hits = len(known & gold)
    recall = hits / len(gold)
    if n_called == 0:
        return ToolSelection(
            precision=Measure(), recall=Measure(value=0.0, n=len(gold)), f1=Measure(value=0.0, n=1)
        )
    precision = hits / n_called
    return ToolSelection(
        precision=Measure(value=precision, n=n_called),
        recall=Measure(value=recall, n=len(gold)),
        f1=Measure(value=f1(precision, recall), n=1),
    )
