"""The ``default`` protocol: deterministic checks first, then rules, then (optionally) a judge.

Pass rate (``pass_rate.label_episode``): a missing episode, an error, an exhausted budget, a
give-up on a solvable task, no ``Finish`` or an empty answer is unsolved; the task's checks decide
when it has any; an unsolvable task passes when the agent says why it cannot be done; what is
left is unsure, or, with ``--judge``, the judge's **majority** over ``samples`` answers to
``check_answer_status`` (a tie at the top is Unsure), and on an Unsure majority the majority of
``samples`` second looks (``parse_answer_status`` on the whole answer). The judge is told when a
task is unsolvable. Every expected episode counts: a missing one is unsolved; a judge error is
listed and left out.

Win rate (``win_rate.compare_episode``): ToolEval's preference written as rules on the chosen
paths (exactly one solved wins; both solved: fewer steps; neither: more successful calls, more
distinct tools, fewer steps). What rules cannot decide (two solved answers with as many steps,
two failed ones equal on every count) goes, with a judge, to ``select_better_answer`` on the
whole answers, asked in both orders in each of ``rounds`` rounds; the side with more votes wins,
an even split is a tie. A tie counts half a win.

``docs/evaluation.md`` tables every point where this differs from ``toolbench`` and why.
May import ``eval`` modules only.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from collections.abc import Sequence

from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.eval.judge import Judge, JudgeError
from sandbox.eval.pass_rate import (
    SCORES,
    EpisodeLabel,
    Label,
    label_expected,
    needs_judge,
)
from sandbox.eval.protocol import EpisodeKey, JudgeSettings, ProtocolBase
from sandbox.eval.tooleval.answer import converted_answer, for_preference
from sandbox.eval.tooleval.functions import better_fields
from sandbox.eval.tooleval.preference import PREFERENCE_SEED_BASE
from sandbox.eval.win_rate import (
    PairOutcome,
    RunSide,
    compare_runs,
    judged,
)

__all__ = ["DefaultProtocol", "majority"]

_LABEL: dict[str, Label] = {"Solved": "solved", "Unsolved": "unsolved", "Unsure": "unsure"}
UNSOLVABLE_NOTE = (
    "\n\n(Note: this query cannot be done with the tools available; an answer solves it only if "
    "it says that it cannot be done, and why.)"
)


def majority(statuses: Sequence[str]) -> str:
    """The status with a strict plurality; a tie at the top (or no vote) is Unsure."""
    counts = Counter(statuses).most_common()
    if not counts or (len(counts) > 1 and counts[0][1] == counts[1][1]):
        return "Unsure"
    return counts[0][0]


class DefaultProtocol(ProtocolBase):
    name = "default"
    summary = "checks, then rules, then a judge's majority; ties count half"
    judge_required = False
    labels_each_episode = True
    """An episode's label depends on that episode alone: a run is labelled as it streams."""
    defaults = JudgeSettings(samples=3, rounds=1, temperature=0.2)

    # -- pass rate ---------------------------------------------------------------------------

    async def label(
        self,
        trajs: Sequence[Trajectory],
        tasks: Sequence[Task],
        keys: Sequence[EpisodeKey],
        judge: Judge | None,
        settings: JudgeSettings,
    ) -> list[EpisodeLabel]:
        labels = label_expected(trajs, tasks, keys)
        if judge is None:
            return labels
        samples = settings.samples or self.defaults.samples or 1
        by_key = {(t.scenario_id, t.trial): t for t in trajs}
        by_id = {t.id: t for t in tasks}

        async def one(lb: EpisodeLabel) -> EpisodeLabel:
            traj = by_key.get((lb.task_id, lb.trial))
            if traj is None or not needs_judge(lb):
                return lb
            try:
                return await self._judged(judge, traj, by_id[lb.task_id], lb, samples)
            except JudgeError as e:
                return lb.model_copy(
                    update={"excluded": "judge_error", "reason": f"judge error: {e}"}
                )

        return list(await asyncio.gather(*(one(lb) for lb in labels)))

    async def _judged(
        self, judge: Judge, traj: Trajectory, task: Task, base: EpisodeLabel, samples: int
    ) -> EpisodeLabel:
        query = task.query if task.solvable else task.query + UNSOLVABLE_NOTE
        answer = converted_answer(traj)
        fields = {"query": query, "answer": str(answer["final_answer"])}
        first = await asyncio.gather(
            *(judge.ask("check_answer_status", fields, index=i) for i in range(samples))
        )
        votes = [r["answer_status"] for r in first]
        look = "answer only"
        if majority(votes) == "Unsure":
            whole = {"query": query, "answer": json.dumps(answer, ensure_ascii=False)}
            second = await asyncio.gather(
                *(judge.ask("parse_answer_status", whole, index=i) for i in range(samples))
            )
            votes = [r["answer_status"] for r in second]
            look = "second look at the whole answer"
        status = majority(votes)
        label = _LABEL[status]
        tally = ", ".join(f"{k} {v}" for k, v in sorted(Counter(votes).items()))
        return base.model_copy(
            update={
                "label": label,
                "score": SCORES[label],
                "method": "judge",
                "reason": f"judge {judge.model.name}: {status} ({tally}; {look})",
            }
        )

    # -- win rate ----------------------------------------------------------------------------

    async def prefer(
        self,
        candidate: RunSide,
        reference: RunSide,
        tasks: Sequence[Task],
        judge: Judge | None,
        settings: JudgeSettings,
        *,
        seed: int,
    ) -> list[PairOutcome]:
        outcomes = compare_runs(
            candidate.trajectories,
            candidate.labels,
            reference.trajectories,
            reference.labels,
            tasks,
        )
        if judge is None:
            return outcomes
        rounds = settings.rounds or self.defaults.rounds or 1
        query = {t.id: t.query for t in tasks}
        cand = {(t.scenario_id, t.trial): t for t in candidate.trajectories}
        ref = {(t.scenario_id, t.trial): t for t in reference.trajectories}

        async def one(o: PairOutcome) -> PairOutcome:
            key = (o.task_id, o.trial)
            if not o.undecided or key not in cand or key not in ref:
                return o
            a = for_preference(converted_answer(cand[key]))
            b = for_preference(converted_answer(ref[key]))
            try:
                pref = await both_orders(judge, query[o.task_id], a, b, rounds)
            except JudgeError as e:
                return o.model_copy(update={"judge_error": str(e), "decided_by": "judge"})
            return judged(o, pref)

        return list(await asyncio.gather(*(one(o) for o in outcomes)))


async def both_orders(judge: Judge, query: str, a: dict, b: dict, rounds: int) -> int | None:
    """0 if ``a`` is better, 1 if ``b``, None when the votes tie: ``select_better_answer`` asked
    in both orders in each round, so a judge that always picks one position cancels out."""
    asks = []
    for r in range(rounds):
        for first, second in ((a, b), (b, a)):
            fields = better_fields(query, first, second)
            asks.append(judge.ask("select_better_answer", fields, index=PREFERENCE_SEED_BASE + r))
    replies = await asyncio.gather(*asks)
    votes_a = sum(1 for i, r in enumerate(replies) if (r["index"] == 0) == (i % 2 == 0))
    votes_b = len(replies) - votes_a
    if votes_a == votes_b:
        return None
    return 0 if votes_a > votes_b else 1
