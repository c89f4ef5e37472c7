"""Review / recovery: what the agent did after a tool call failed.

The project's own measure, on the episode (no paper defines it in this form). T-Eval's
``review`` (``teval/evaluators/review_evaluator.py``: a verdict A-E on one tool response) is
asked in probe mode (``probe.py``).

A failure is any call on the chosen path whose observation has ``ok`` false, whatever its
provenance: a recorded tool error (``hit`` with ok false), a miss, a schema rejection, or an
injected fault (``fault:<kind>``). Two measures, each applicable only to episodes with a failure:

- **recovery**: the episode still reached an answer (status ``answered``) after its failures.
  One unit per episode.
- **no blind repeat**: for each distinct failing call (same API, or function name when unknown,
  and same canonical arguments), the agent did not re-issue it identically more than once after it
  first failed. One retry is allowed because it can be right: an injected fault or an internal
  error is decided per occurrence, and the suite's recorded "internal error, then the retry
  succeeds" case needs exactly one identical retry. A second identical retry is blind.
  One unit per distinct failing call.

``repeats_after_failure`` counts every identical call made after its first failure (the allowed
retry included), for the report.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from agents.trajectory import Status
from mock_tools.canonical import dumps_canonical
from sandbox.eval.actions import Action
from sandbox.eval.measure import Measure, ratio

__all__ = ["ALLOWED_RETRIES", "ReviewScores", "review_scores"]

ALLOWED_RETRIES = 1


class ReviewScores(BaseModel):
    recovery: Measure
    no_blind_repeat: Measure
    failures: int
    repeats_after_failure: int


def _identity(a: Action) -> tuple[str, str]:
    head = f"{a.key[0]}/{a.key[1]}" if a.key is not None else a.name
    return head, dumps_canonical(a.args)


def review_scores(actions: Sequence[Action], status: Status) -> ReviewScores:
    """Recovery and repeat discipline after failed calls, over the chosen path's actions."""
    first_failure: dict[tuple[str, str], int] = {}
    for pos, a in enumerate(actions):
        if a.failed:
            first_failure.setdefault(_identity(a), pos)
    failures = sum(a.failed for a in actions)
    if not first_failure:
        return ReviewScores(
            recovery=Measure(), no_blind_repeat=Measure(), failures=0, repeats_after_failure=0
        )
    repeats = dict.fromkeys(first_failure, 0)
    for pos, a in enumerate(actions):
        ident = _identity(a)
        if ident in first_failure and pos > first_failure[ident]:
            repeats[ident] += 1
    disciplined = sum(1 for r in repeats.values() if r <= ALLOWED_RETRIES)
    recovered = 1.0 if status is Status.answered else 0.0
    return ReviewScores(
        recovery=Measure(value=recovered, n=1),
        no_blind_repeat=ratio(disciplined, len(repeats)),
        failures=failures,
        repeats_after_failure=sum(repeats.values()),
    )
