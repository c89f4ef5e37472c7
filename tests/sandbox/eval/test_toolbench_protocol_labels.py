"""The ``toolbench`` protocol's labels and preference settings (``tooleval.protocol_toolbench``)
on a scripted judge: the reason each label gives, the label shown for split samples, which
episodes are labelled and in what order, the protocol's defaults (4 samples, 2 rounds) and the
message when no judge is given. Expected labels follow ``eval_pass_rate.py`` and ``rtl.py`` as
docs/evaluation.md states them ("Pass label of one sample", "Pass rate"), worked out by hand."""

from __future__ import annotations

from typing import Any

import pytest
from outcome_builders import add_call, task, traj

from agents.trajectory import Status
from sandbox.errors import ConfigError
from sandbox.eval.judge import JudgeError
from sandbox.eval.pass_rate import label_run
from sandbox.eval.protocol import JudgeSettings
from sandbox.eval.protocols import get_protocol
from sandbox.eval.tooleval.protocol_toolbench import label_sample
from sandbox.eval.win_rate import RunSide

TOOLBENCH = get_protocol("toolbench")
CHECKED = [{"kind": "contains", "value": "5"}]


class SampledJudge:
    """``check_answer_status`` answers per sample (the ``index``) by a marker in the answer;
    ``parse_answer_status`` answers ``second``; ``select_better_answer`` picks answer 0. A
    marker in ``broken`` makes the judge fail. Every question is kept."""

    def __init__(
        self, first: dict[str, list[str]], second: str = "Solved", broken: str = "\x00"
    ) -> None:
        self.first = first
        self.second = second
        self.broken = broken
        self.asked: list[tuple[str, int]] = []

    async def ask(
        self, function: str, fields: dict[str, str], *, index: int = 0, **_: Any
    ) -> dict[str, Any]:
        self.asked.append((function, index))
        text = " ".join(fields.values())
        if self.broken in text:
            raise JudgeError("judge down")
        if function == "check_answer_status":
            statuses = next(v for m, v in self.first.items() if m in fields["answer"])
            return {"answer_status": statuses[index % len(statuses)], "reason": "first"}
        if function == "parse_answer_status":
            return {"answer_status": self.second, "reason": "second"}
        return {"index": 0, "reason": "first shown"}


async def test_a_sample_label_says_how_it_was_reached() -> None:
    judge = SampledJudge({"SURE": ["Solved"], "HMM": ["Unsure"]}, second="Unsolved")
    t = task("a")
    assert await label_sample(judge, traj("a", answer="SURE 5"), t, 0) == (
        "solved",
        "Solved (final answer): first",
        True,
    )
    assert await label_sample(judge, traj("a", answer="HMM"), t, 1) == (
        "unsolved",
        "Unsolved (second look): second",
        True,
    )
    no_finish = traj("a", status=Status.budget_exhausted, answer=None, calls=[[add_call(1, 2)]])
    assert await label_sample(judge, no_finish, t, 0) == (
        "unsolved",
        "the final step is not a Finish call",
        False,
    )
    empty = traj("a", answer=" ")
    assert await label_sample(judge, empty, t, 0) == (
        "unsolved",
        "empty final answer or a give-up",
        False,
    )
    assert judge.asked == [
        ("check_answer_status", 0),
        ("check_answer_status", 1),
        ("parse_answer_status", 1),
    ]


async def test_labels_over_samples_by_hand() -> None:
    """Four samples (the protocol's default when none is set). ``a``: Solved, Solved, Unsolved,
    Solved -> shown solved, score 3/4; ``b``: Solved, Unsolved, Solved, Unsolved -> split 2-2,
    shown unsure, score 1/2; ``c``: Unsure, then a second look Solved, each time -> solved,
    score 1."""
    judge = SampledJudge(
        {
            "A": ["Solved", "Solved", "Unsolved", "Solved"],
            "B": ["Solved", "Unsolved"],
            "C": ["Unsure"],
        }
    )
    tasks = [task("a", checks=CHECKED), task("b"), task("c")]
    trajs = [traj("a", answer="A 6"), traj("b", answer="B"), traj("c", answer="C")]
    labels = await TOOLBENCH.label(
        trajs,
        tasks,
        [(t.id, 0) for t in tasks],
        judge,
        JudgeSettings(),
    )
    got = [(lb.task_id, lb.label, lb.score, lb.method, lb.samples, lb.reason) for lb in labels]
    assert got == [
        (
            "a",
            "solved",
            0.75,
            "judge",
            ["solved", "solved", "unsolved", "solved"],
            "solved 3, unsolved 1: Solved (final answer): first",
        ),
        (
            "b",
            "unsure",
            0.5,
            "judge",
            ["solved", "unsolved", "solved", "unsolved"],
            # no sample said unsure: the first sample's reason is shown
            "solved 2, unsolved 2: Solved (final answer): first",
        ),
        (
            "c",
            "solved",
            1.0,
            "judge",
            ["solved"] * 4,
            "solved 4: Solved (second look): second",
        ),
    ]
    # the task's checks are not ToolEval's: the judge decides, no check result is reported
    assert labels[0].checks == [] and labels[0].status == "answered"
    assert sorted({i for _, i in judge.asked}) == [0, 1, 2, 3]


@pytest.mark.parametrize("samples", [1, 2])
async def test_a_label_decided_by_rules_alone_reads_like_one(samples: int) -> None:
    judge = SampledJudge({})
    (label,) = await TOOLBENCH.label(
        [traj("a", answer="")],
        [task("a")],
        [("a", 0)],
        judge,
        JudgeSettings(samples=samples),
    )
    assert (label.label, label.method, label.reason, label.score, label.samples) == (
        "unsolved",
        "rule",
        "empty final answer or a give-up",
        0.0,
        ["unsolved"] * samples,
    )
    assert judge.asked == []


async def test_an_infrastructure_failure_is_left_out_as_infra() -> None:
    broken = traj("a", status=Status.error, answer=None, infra=True, trial=1)
    (label,) = await TOOLBENCH.label(
        [broken], [task("a")], [("a", 1)], SampledJudge({}), JudgeSettings(samples=1)
    )
    assert (label.task_id, label.trial, label.excluded, label.label) == (
        "a",
        1,
        "infra",
        "unsolved",
    )
    assert label.reason == "infra error: endpoint down"


async def test_which_episodes_are_labelled_and_in_what_order() -> None:
    """Every wanted key of a task of the suite and every trajectory of one, in task order then
    trial; an expected episode without a trajectory is dropped as missing; keys and trajectories
    of other tasks are ignored; a judge failure is listed with its message."""
    judge = SampledJudge({"ok": ["Solved"]}, broken="DOWN")
    tasks = [task("z"), task("a")]
    trajs = [
        traj("a", answer="ok", trial=2),
        traj("z", answer="DOWN", trial=1),
        traj("elsewhere", answer="ok"),
    ]
    keys = [("a", 0), ("z", 1), ("gone", 0), ("a", 3)]
    labels = await TOOLBENCH.label(
        trajs,
        tasks,
        keys,
        judge,
        JudgeSettings(samples=1),
    )
    assert [(lb.task_id, lb.trial, lb.excluded, lb.reason) for lb in labels] == [
        ("z", 1, "judge_error", "judge error: judge down"),
        ("a", 0, "missing", "no answer: dropped from the denominator, as ToolEval does"),
        ("a", 2, None, "solved 1: Solved (final answer): first"),
        ("a", 3, "missing", "no answer: dropped from the denominator, as ToolEval does"),
    ]


async def test_without_a_judge_the_message_says_how_to_give_one() -> None:
    message = (
        "the toolbench protocol needs a judge: --judge MODEL (an alias from models.yaml or "
        "openai:<model>@<base_url>)"
    )
    with pytest.raises(ConfigError) as e:
        await TOOLBENCH.label([], [task("a")], [("a", 0)], None, JudgeSettings())
    assert str(e.value) == message
    side = RunSide(name="x", trajectories=[], labels=[])
    with pytest.raises(ConfigError) as e:
        await TOOLBENCH.prefer(side, side, [task("a")], None, JudgeSettings(), seed=0)
    assert str(e.value) == message


async def test_the_preference_takes_two_rounds_unless_told() -> None:
    judge = SampledJudge({"": ["Solved"]})
    tasks = [task("a")]
    cand, ref = [traj("a", answer="c")], [traj("a", answer="r")]
    sides = [
        RunSide(name=n, trajectories=t, labels=label_run(t, tasks))
        for n, t in (("c", cand), ("r", ref))
    ]
    (default,) = await TOOLBENCH.prefer(*sides, tasks, judge, JudgeSettings(), seed=1)
    (three,) = await TOOLBENCH.prefer(*sides, tasks, judge, JudgeSettings(rounds=3), seed=1)
    assert (len(default.rounds), len(three.rounds)) == (2, 3)
    # a judge that prefers the first answer shown, under alternation: 1-1, then 2-1
    assert default.winner == "tie" and three.winner != "tie"
