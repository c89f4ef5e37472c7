"""``strict``: the default protocol, where an unsure episode and a tie both count 0.

The labels are the default protocol's (checks, rules, then a judge); only their scores change:
an episode nothing could decide counts as unsolved in the pass rate, and a tied pair counts as
no win in the win rate.
"""

from __future__ import annotations

from collections.abc import Sequence

from agents.trajectory import Trajectory
from mock_tools.models import Task
from sandbox.eval.judge import Judge
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.protocol import EpisodeKey, JudgeSettings
from sandbox.eval.protocol_default import DefaultProtocol


class StrictProtocol(DefaultProtocol):
    name = "strict"
    summary = "the default protocol's labels; unsure counts 0, ties count 0"
    tie_value = 0.0
    scoring_rule = "solved 1, unsure 0, unsolved 0"

    async def label(
        self,
        trajs: Sequence[Trajectory],
        tasks: Sequence[Task],
        keys: Sequence[EpisodeKey],
        judge: Judge | None,
        settings: JudgeSettings,
    ) -> list[EpisodeLabel]:
        labels = await super().label(trajs, tasks, keys, judge, settings)
        return [
            lb.model_copy(update={"score": 0.0}) if lb.label == "unsure" else lb for lb in labels
        ]
