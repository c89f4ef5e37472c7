"""ToolEval's preference over rounds: which run wins each paired episode, and how the answers are
ordered for the judge.

From StableToolBench's ``toolbench/tooleval/eval_preference.py`` and ``annotate_preference`` in
``evaluators/registered_cls/base.py``:

- a task missing from the reference run is a win of the candidate, one missing from the
  candidate a win of the reference (checked in that order, so a task missing from both is the
  candidate's; ToolEval tests the reference first). An episode that ended on an infrastructure
  error has no answer and counts as missing;
- otherwise, in each of ``rounds`` rounds (``--judge-rounds``, ToolEval's default 2), the judge
  compares the two answers (each reduced by ``tooleval_answer.for_preference``) with the
  protocol's round rule, and the winner of the round gets a point; the episode's winner is the
  run with more points, a tie otherwise (an even split is a tie).

Order. ToolEval shows the two answers in a random order in every round (a ``random.shuffle``
inside ``annotate_preference``; the outer loop's attempt to alternate is a no-op, its condition
``i % 2 == 0 or i >= 0`` is always true). Here ``order="alternate"`` (the default) shows the
reference first in round 0 when a coin seeded by the run's seed, the task and the trial says so,
and swaps the order every round: over an even number of rounds each answer is shown first
equally often, which cancels a judge's position bias deterministically. ``order="random"``
reproduces ToolEval's shuffle, seeded the same way per round.

A judge failure on any round makes the pair a judge error (``PairOutcome.judge_error``): listed,
not counted.
May import ``eval`` modules only.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.eval.judge import Judge, JudgeError
from sandbox.eval.stats import seeded_rng
from sandbox.eval.tooleval_answer import converted_answer, for_preference
from sandbox.eval.win_rate import PairOutcome, RunSide, Winner, pair_keys

__all__ = ["PREFERENCE_SEED_BASE", "RoundRule", "prefer_by_rounds", "shown_first"]

PREFERENCE_SEED_BASE = 1000
"""Preference round ``r`` asks the judge with index (seed) ``PREFERENCE_SEED_BASE + r``, so its
questions are sampled apart from the pass-rate samples ``0..K-1``."""

RoundRule = Callable[..., Awaitable[int]]
"""``rule(judge, query, answers, *, index, rng) -> 0 | 1`` (``tooleval_rules``)."""


def shown_first(order: str, seed: int, task_id: str, trial: int, round_: int) -> Winner:
    """``"reference"`` or ``"candidate"``: whose answer the judge sees first in this round."""
    if order == "random":
        coin = seeded_rng(seed, "order", task_id, trial, round_).random() < 0.5
    else:
        coin = (seeded_rng(seed, "order", task_id, trial).random() < 0.5) != (round_ % 2 == 1)
    return "reference" if coin else "candidate"


def _answers(side: RunSide) -> dict[tuple[str, int], Trajectory]:
    return {(t.scenario_id, t.trial): t for t in side.trajectories if not t.infra_error}


async def prefer_by_rounds(
    candidate: RunSide,
    reference: RunSide,
    tasks: Sequence[Task],
    judge: Judge,
    rule: RoundRule,
    *,
    rounds: int,
    order: str,
    seed: int,
) -> list[PairOutcome]:
    """One outcome per paired episode (every task of ``tasks``, every trial either run has)."""
    cand, ref = _answers(candidate), _answers(reference)
    seen = {(t.scenario_id, t.trial) for s in (candidate, reference) for t in s.trajectories}
    query = {t.id: t.query for t in tasks}

    async def one(key: tuple[str, int]) -> PairOutcome:
        task_id, trial = key
        if key not in ref:
            return PairOutcome(
                task_id=task_id, trial=trial, winner="candidate", rule="missing_reference"
            )
        if key not in cand:
            return PairOutcome(
                task_id=task_id, trial=trial, winner="reference", rule="missing_candidate"
            )
        answers = {
            "candidate": for_preference(converted_answer(cand[key])),
            "reference": for_preference(converted_answer(ref[key])),
        }
        won: list[Winner] = []
        try:
            for r in range(rounds):
                first = shown_first(order, seed, task_id, trial, r)
                second: Winner = "candidate" if first == "reference" else "reference"
                rng: random.Random = seeded_rng(seed, "choice", task_id, trial, r)
                shown: list[Any] = [answers[first], answers[second]]
                best = await rule(
                    judge, query[task_id], shown, index=PREFERENCE_SEED_BASE + r, rng=rng
                )
                won.append(first if best == 0 else second)
        except JudgeError as e:
            return PairOutcome(
                task_id=task_id,
                trial=trial,
                winner="tie",
                rule="judge_error",
                decided_by="judge",
                judge_error=str(e),
            )
        c, r_ = won.count("candidate"), won.count("reference")
        winner: Winner = "candidate" if c > r_ else "reference" if r_ > c else "tie"
        return PairOutcome(
            task_id=task_id,
            trial=trial,
            winner=winner,
            rule=f"rounds {c}-{r_}",
            decided_by="judge",
            rounds=won,
        )

    keys = pair_keys(dict.fromkeys(seen), {}, tasks)
    return list(await asyncio.gather(*(one(k) for k in keys)))
