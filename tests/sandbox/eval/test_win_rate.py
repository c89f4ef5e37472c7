from __future__ import annotations

import pytest
from outcome_builders import call, task, traj

from agents.trajectory import Node, Status
from sandbox.eval.pass_rate import label_run
from sandbox.eval.win_rate import (
    EpisodeFacts,
    PairOutcome,
    RunSide,
    compare_episode,
    compare_runs,
    episode_facts,
    judged,
    mirror,
    summarise_wins,
)


def F(**kw: object) -> EpisodeFacts:  # noqa: N802 - a short builder
    base = {"solved": False, "steps": 3, "successful_calls": 1, "distinct_tools": 1, "answer": "x"}
    return EpisodeFacts(**{**base, **kw})


@pytest.mark.parametrize(
    ("cand", "ref", "winner", "rule", "undecided"),
    [
        (F(solved=True), F(), "candidate", "solved", False),
        (F(), F(solved=True), "reference", "solved", False),
        (F(solved=True, steps=2), F(solved=True, steps=4), "candidate", "fewer_steps", False),
        (F(solved=True, steps=5), F(solved=True, steps=4), "reference", "fewer_steps", False),
        (F(solved=True), F(solved=True), "tie", "both_solved_same_steps", True),
        (F(successful_calls=3), F(successful_calls=2), "candidate", "more_successful_calls", False),
        (F(successful_calls=0), F(successful_calls=2), "reference", "more_successful_calls", False),
        (F(distinct_tools=2), F(distinct_tools=1), "candidate", "more_distinct_tools", False),
        (F(distinct_tools=1), F(distinct_tools=3), "reference", "more_distinct_tools", False),
        (F(steps=2), F(steps=6), "candidate", "fewer_steps", False),
        (F(steps=7), F(steps=6), "reference", "fewer_steps", False),
        (F(), F(), "tie", "both_failed_equal", True),
        (F(answer=""), F(), "tie", "both_failed_equal", False),
    ],
)
def test_every_rule_branch(
    cand: EpisodeFacts, ref: EpisodeFacts, winner: str, rule: str, undecided: bool
) -> None:
    out = compare_episode(cand, ref, "t")
    assert (out.winner, out.rule, out.undecided) == (winner, rule, undecided)
    assert out.decided_by == ("none" if winner == "tie" else "rule")


def test_judge_settles_or_keeps_a_tie() -> None:
    tie = compare_episode(F(solved=True), F(solved=True), "t")
    assert judged(tie, 0).winner == "candidate"
    assert judged(tie, 1).winner == "reference"
    assert judged(tie, 1).decided_by == "judge"
    kept = judged(tie, None)
    assert (kept.winner, kept.decided_by) == ("tie", "judge")


def test_facts_use_the_chosen_path_only() -> None:
    t = traj(calls=[[call("add", i=0), call("mul", ok=False, i=1)], [call("add", i=2)]])
    # a dead branch hanging off the root, not on the chosen path
    t.nodes.append(Node(id=len(t.nodes), parent=0, kind="action", calls=[call("div", i=9)]))
    facts = episode_facts(t, None)
    assert (facts.steps, facts.successful_calls, facts.distinct_tools) == (3, 2, 2)
    assert not facts.solved and facts.answer == "42"
    assert not episode_facts(None, None).present


def test_compare_runs_and_summary() -> None:
    paris = [{"kind": "contains", "value": "Paris"}]
    tasks = [task("a", checks=paris), task("b", checks=paris), task("c", checks=paris)]
    cand = [
        traj("a", answer="Paris"),
        traj("b", answer="Paris", calls=[[call("add")]]),
        traj("c", answer="Rome"),
    ]
    ref = [
        traj("a", answer="Rome"),
        traj("b", answer="Paris"),  # fewer steps than the candidate's b
        traj("c", status=Status.gave_up, answer=None),
    ]
    outcomes = compare_runs(cand, label_run(cand, tasks), ref, label_run(ref, tasks), tasks)
    assert [(o.task_id, o.winner, o.rule) for o in outcomes] == [
        ("a", "candidate", "solved"),
        ("b", "reference", "fewer_steps"),
        ("c", "tie", "both_failed_equal"),
    ]
    s = summarise_wins(outcomes, candidate="x", reference="y")
    assert (s.n, s.wins, s.losses, s.ties) == (3, 1, 1, 1)
    assert s.win_rate.value == pytest.approx(0.5)
    assert s.tooleval_win_rate.value == pytest.approx(1 / 3)
    assert s.by_rule == {"both_failed_equal": 1, "fewer_steps": 1, "solved": 1}


def test_missing_episode_loses_to_an_attempt() -> None:
    tasks = [task("a")]
    cand = [traj("a", status=Status.gave_up, answer=None, calls=[[call("add")]])]
    outcomes = compare_runs(cand, label_run(cand, tasks), [], label_run([], tasks), tasks)
    assert [(o.winner, o.rule) for o in outcomes] == [("candidate", "more_successful_calls")]


def test_the_mirror_of_a_comparison_is_the_other_side() -> None:
    paris = [{"kind": "contains", "value": "Paris"}]
    tasks = [task("a", checks=paris), task("b", checks=paris)]
    runs = []
    for name, answers in (("good", ["Paris", "Paris"]), ("half", ["Paris", "Rome"])):
        trajs = [traj(t.id, answer=a) for t, a in zip(tasks, answers, strict=True)]
        runs.append(RunSide(name=name, trajectories=trajs, labels=label_run(trajs, tasks)))
    good, half = runs
    outcomes = compare_runs(good.trajectories, good.labels, half.trajectories, half.labels, tasks)
    forward = summarise_wins(outcomes, candidate="good", reference="half")
    backward = summarise_wins([mirror(o) for o in outcomes], candidate="half", reference="good")
    assert (forward.wins, forward.ties, backward.losses, backward.ties) == (1, 1, 1, 1)
    assert forward.win_rate.value + backward.win_rate.value == pytest.approx(1)
    # the same outcomes seen directly from the other side
    direct = compare_runs(half.trajectories, half.labels, good.trajectories, good.labels, tasks)
    assert [o.winner for o in direct] == [mirror(o).winner for o in outcomes]


def test_ties_count_as_the_protocol_says_and_judge_errors_are_listed() -> None:
    outcomes = [
        PairOutcome(task_id="a", winner="candidate", rule="r"),
        PairOutcome(task_id="b", winner="tie", rule="r"),
        PairOutcome(task_id="c", winner="reference", rule="r"),
        PairOutcome(task_id="d", winner="tie", rule="judge_error", judge_error="down"),
    ]
    half = summarise_wins(outcomes, candidate="x", reference="y")
    zero = summarise_wins(outcomes, candidate="x", reference="y", tie_value=0.0)
    assert half.n == zero.n == 3 and half.judge_errors == ["d"]
    assert half.win_rate.value == pytest.approx(1.5 / 3)
    assert zero.win_rate.value == pytest.approx(1 / 3) == zero.tooleval_win_rate.value
    assert zero.tie_rate == pytest.approx(1 / 3)
