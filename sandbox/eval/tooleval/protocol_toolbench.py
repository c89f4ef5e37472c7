"""The ``toolbench`` protocol: ToolEval's pass rate and preference, label for label.

From StableToolBench's ``toolbench/tooleval/eval_pass_rate.py`` and ``eval_preference.py`` (the
newer generation, ``openai>=1`` with ``tools``), with ``registered_cls/rtl.py`` for the rules.

Pass rate, for each of ``samples`` independent judge samples (``--judge-samples``, ToolEval's
default 4), each episode's label (``label_sample``):

1. the final step (the last tool node of the answer chain) is not a ``Finish`` call -> Unsolved,
   no judge;
2. an empty final answer, or a give-up -> Unsolved, no judge;
3. otherwise ``check_answer_status`` on the final answer, and on Unsure a second look,
   ``parse_answer_status`` on the whole answer, whose status is final.

Sample ``i``'s pass rate is the mean over episodes of Solved 1 / Unsure 0.5 / Unsolved 0; the pass
rate is the mean over samples and its spread their standard deviation (ddof 0), both reported,
with the project's task-clustered bootstrap interval. An expected episode with no answer at all
(no trajectory, or one that ended on an infrastructure error) is dropped from the denominator, as
ToolEval drops test ids missing from the converted answers, and listed apart. An episode whose
judging failed is listed apart too. Nothing else of the project's labelling applies: no checks,
no special case for unsolvable tasks (ToolEval evaluates the solvable queries only).

Win rate: ``tooleval.preference.prefer_by_rounds`` with ``tooleval.rules.toolbench_round``, over
``rounds`` rounds (``--judge-rounds``, ToolEval's default 2); ``win_rate = wins / episodes`` (a
tie counts 0) and the tie rate beside it.
May import ``eval`` modules only.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Sequence

from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.errors import ConfigError
from sandbox.eval.judge import Judge, JudgeError
from sandbox.eval.pass_rate import (
    SCORES,
    EpisodeLabel,
    Label,
    Method,
    label_episode,
)
from sandbox.eval.protocol import EpisodeKey, JudgeSettings, ProtocolBase
from sandbox.eval.tooleval.answer import converted_answer, final_step_is_finish
from sandbox.eval.tooleval.preference import RoundRule, prefer_by_rounds
from sandbox.eval.tooleval.rules import check_is_solved, toolbench_round
from sandbox.eval.win_rate import PairOutcome, RunSide

__all__ = ["ToolbenchProtocol", "label_sample"]

_LABEL: dict[str, Label] = {"Solved": "solved", "Unsolved": "unsolved", "Unsure": "unsure"}


async def label_sample(
    judge: Judge, traj: Trajectory, task: Task, index: int
) -> tuple[Label, str, bool]:
    """``(label, reason, asked the judge)`` of one episode in sample ``index``."""
    answer = converted_answer(traj)
    if not final_step_is_finish(answer):
        return "unsolved", "the final step is not a Finish call", False
    verdict = await check_is_solved(judge, task.query, answer, index=index)
    if not verdict.asked:
        return "unsolved", verdict.reason, False
    look = "second look" if verdict.second_look else "final answer"
    return _LABEL[verdict.status], f"{verdict.status} ({look}): {verdict.reason}".strip(), True


def _mode(labels: Sequence[Label]) -> Label:
    """The most frequent sample label (a tie at the top is unsure): what reports show."""
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "unsure"
    return counts[0][0]


class ToolbenchProtocol(ProtocolBase):
    name = "toolbench"
    summary = "ToolEval (StableToolBench): mean over judge samples, ties count 0"
    judge_required = True
    labels_each_episode = True
    """An episode's label depends on that episode alone: a run is labelled as it streams."""
    tie_value = 0.0
    defaults = JudgeSettings(samples=4, rounds=2, temperature=0.2)
    round_rule: RoundRule = staticmethod(toolbench_round)

    def _judge(self, judge: Judge | None) -> Judge:
        if judge is None:
            raise ConfigError(
                f"the {self.name} protocol needs a judge: --judge MODEL (an alias from "
                "models.yaml or openai:<model>@<base_url>)"
            )
        return judge

    # -- pass rate ---------------------------------------------------------------------------

    async def label(
        self,
        trajs: Sequence[Trajectory],
        tasks: Sequence[Task],
        keys: Sequence[EpisodeKey],
        judge: Judge | None,
        settings: JudgeSettings,
    ) -> list[EpisodeLabel]:
        the_judge = self._judge(judge)
        samples = settings.samples or self.defaults.samples or 1
        by_id = {t.id: t for t in tasks}
        order = {t.id: i for i, t in enumerate(tasks)}
        by_key = {(t.scenario_id, t.trial): t for t in trajs if t.scenario_id in by_id}
        wanted = sorted(
            {k for k in keys if k[0] in by_id} | set(by_key), key=lambda k: (order[k[0]], k[1])
        )

        async def one(key: EpisodeKey) -> EpisodeLabel:
            task, traj = by_id[key[0]], by_key.get(key)
            base = label_episode(traj, task).model_copy(update={"trial": key[1]})
            if traj is None:
                reason = "no answer: dropped from the denominator, as ToolEval does"
                return base.model_copy(update={"excluded": "missing", "reason": reason})
            if traj.infra_error:
                return base  # label_episode already left it out as ``infra``
            try:
                results = await asyncio.gather(
                    *(label_sample(the_judge, traj, task, i) for i in range(samples))
                )
            except JudgeError as e:
                return base.model_copy(
                    update={"excluded": "judge_error", "reason": f"judge error: {e}"}
                )
            sampled = [r[0] for r in results]
            label = _mode(sampled)
            asked = any(r[2] for r in results)
            method: Method = "judge" if asked else "rule"
            reasons = [r[1] for r in results if r[0] == label] or [results[0][1]]
            tally = ", ".join(f"{k} {v}" for k, v in sorted(Counter(sampled).items()))
            return base.model_copy(
                update={
                    "label": label,
                    "score": sum(SCORES[s] for s in sampled) / len(sampled),
                    "method": method,
                    "reason": f"{tally}: {reasons[0]}" if asked else reasons[0],
                    "samples": sampled,
                    "checks": [],
                }
            )

        return list(await asyncio.gather(*(one(k) for k in wanted)))

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
        return await prefer_by_rounds(
            candidate,
            reference,
            tasks,
            self._judge(judge),
            self.round_rule,
            rounds=settings.rounds or self.defaults.rounds or 1,
            order=settings.order,
            seed=seed,
        )
