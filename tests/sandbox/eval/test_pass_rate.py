from __future__ import annotations

from outcome_builders import task, traj

from agents.trajectory import ErrorRecord, Status, Trajectory
from mock_tools.models import Task
from sandbox.eval.pass_rate import label_episode, label_run, needs_judge, summarise

PARIS = [{"kind": "contains", "value": "Paris"}]


def test_missing_trajectory_is_unsolved() -> None:
    lb = label_episode(None, task())
    assert (lb.label, lb.score, lb.method, lb.status) == ("unsolved", 0.0, "rule", "missing")


def test_infra_error_is_unsolved_and_flagged() -> None:
    lb = label_episode(traj(status=Status.error, answer=None, infra=True), task())
    assert (lb.label, lb.method, lb.infra_error) == ("unsolved", "rule", True)
    assert "infra" in lb.reason


def test_agent_error_is_unsolved_not_infra() -> None:
    lb = label_episode(traj(status=Status.error, answer=None), task())
    assert (lb.label, lb.infra_error) == ("unsolved", False)


def test_budget_exhausted_is_unsolved_even_with_passing_checks() -> None:
    lb = label_episode(traj(status=Status.budget_exhausted, answer="Paris"), task(checks=PARIS))
    assert (lb.label, lb.method) == ("unsolved", "rule")


def test_give_up_on_solvable_task_is_unsolved() -> None:
    lb = label_episode(traj(status=Status.gave_up, give_up_text="I cannot"), task())
    assert (lb.label, lb.method) == ("unsolved", "rule")


def test_no_finish_and_empty_answer_are_unsolved() -> None:
    no_finish = label_episode(traj(answer=None), task())
    assert (no_finish.label, no_finish.reason) == ("unsolved", "no Finish call")
    empty = label_episode(traj(answer="   "), task())
    assert (empty.label, empty.reason) == ("unsolved", "empty final answer")


def test_checks_decide() -> None:
    ok = label_episode(traj(answer="It is Paris."), task(checks=PARIS))
    assert (ok.label, ok.score, ok.method) == ("solved", 1.0, "check")
    bad = label_episode(traj(answer="It is Lyon."), task(checks=PARIS))
    assert (bad.label, bad.score, bad.method) == ("unsolved", 0.0, "check")
    assert "Paris" in bad.reason and len(bad.checks) == 1


def test_no_checks_is_unsure_for_the_judge() -> None:
    lb = label_episode(traj(answer="42"), task())
    assert (lb.label, lb.score, lb.method) == ("unsure", 0.5, "none")
    assert needs_judge(lb)


def test_unsolvable_task_rules() -> None:
    t = task(solvable=False)
    explained = label_episode(traj(status=Status.gave_up, give_up_text="No API gives that."), t)
    assert (explained.label, explained.method) == ("solved", "rule")
    silent = label_episode(traj(status=Status.gave_up), t)
    assert silent.label == "unsolved"
    cannot = label_episode(traj(answer="Sorry, I cannot book flights with these tools."), t)
    assert (cannot.label, cannot.method) == ("solved", "rule")
    confident = label_episode(traj(answer="Booked flight LH400."), t)
    assert needs_judge(confident)
    checked = label_episode(
        traj(answer="Booked."), task(solvable=False, checks=[{"kind": "contains", "value": "not"}])
    )
    assert (checked.label, checked.method) == ("unsolved", "check")


def test_a_refusal_on_a_solvable_task_is_not_solved() -> None:
    """Saying "it cannot be done" earns the point only where the task is unsolvable: on a
    solvable task without checks the refusal is left to the judge, never solved by rule."""
    refusal = "Sorry, I cannot book flights with these tools."
    solvable = label_episode(traj(answer=refusal), task(solvable=True))
    assert solvable.label != "solved" and needs_judge(solvable)
    unsolvable = label_episode(traj(answer=refusal), task(solvable=False))
    assert (unsolvable.label, unsolvable.method) == ("solved", "rule")


def test_label_run_and_summary() -> None:
    tasks = [
        task("a", group="G1", checks=PARIS),
        task("b", group="G1", checks=PARIS),
        task("c", group="G2"),
        task("d", group="G2", checks=PARIS),
    ]
    trajs = [
        traj("a", answer="Paris"),
        traj("b", answer="Rome"),
        traj("c", answer="something"),
        traj("zzz", answer="Paris"),  # not in the suite: ignored
    ]
    labels = label_run(trajs, tasks)
    assert [(lb.task_id, lb.label) for lb in labels] == [
        ("a", "solved"),
        ("b", "unsolved"),
        ("c", "unsure"),
        ("d", "unsolved"),
    ]
    s = summarise(labels, tasks)
    assert (s.n, s.solved, s.unsolved, s.unsure, s.missing) == (4, 1, 2, 1, 1)
    assert s.pass_rate.value == (1 + 0 + 0.5 + 0) / 4
    assert s.pass_rate.low <= s.pass_rate.value <= s.pass_rate.high
    assert s.groups["G1"].pass_rate.value == 0.5
    assert s.groups["G2"].pass_rate.value == 0.25
    assert s.by_status == {"answered": 3, "missing": 1}
    assert s.by_method == {"check": 2, "none": 1, "rule": 1}
    assert s.infra_errors == 0 and s.excluded == {}


def test_infra_errors_are_left_out_of_the_pass_rate_and_listed() -> None:
    tasks = [task("a", checks=PARIS), task("b", checks=PARIS)]
    labels = label_run(
        [traj("a", answer="Paris"), traj("b", status=Status.error, answer=None, infra=True)], tasks
    )
    s = summarise(labels, tasks)
    assert s.pass_rate.value == 1.0 and s.n == 1  # the agent's own episodes only
    assert s.infra_errors == 1 and s.excluded == {"infra": ["b"]}


def test_summary_counts_unlabelled_tasks_as_unsolved() -> None:
    tasks = [task("a", checks=PARIS), task("b")]
    s = summarise([label_episode(traj("a", answer="Paris"), tasks[0])], tasks)
    assert (s.n, s.solved, s.unsolved, s.missing) == (2, 1, 1, 1)


def _labelled(t: Trajectory | None, tk: Task) -> tuple[str, str, str, str, int, bool]:
    lb = label_episode(t, tk)
    return (lb.label, lb.method, lb.reason, lb.status, lb.trial, lb.infra_error)


def test_each_rule_says_why_it_decided_in_the_report() -> None:
    """The reason a report shows beside a label, rule by rule, with the episode's own status
    and trial (an episode with no trajectory: status ``missing``, trial 0)."""
    cannot = "Sorry, there is no API that can do this."
    with_errors = traj(status=Status.error, answer=None, trial=2).model_copy(
        update={
            "errors": [
                ErrorRecord(kind="agent", message="bad call"),
                ErrorRecord(kind="agent", message="second"),
            ]
        }
    )
    no_errors = traj(status=Status.error, answer=None).model_copy(update={"end_reason": "crashed"})
    infra = traj(status=Status.error, answer=None, infra=True).model_copy(
        update={"errors": [ErrorRecord(kind="agent", message="x"), *traj(infra=True).errors]}
    )
    budget = traj(status=Status.budget_exhausted, answer=None, trial=1)
    cases = [
        (None, task(), ("unsolved", "rule", "no trajectory for this task", "missing", 0, False)),
        (with_errors, task(), ("unsolved", "rule", "error: bad call", "error", 2, False)),
        (no_errors, task(), ("unsolved", "rule", "error: crashed", "error", 0, False)),
        (infra, task(), ("unsolved", "rule", "infra error: endpoint down", "error", 0, True)),
        (
            budget.model_copy(update={"end_reason": "budget:max_tokens"}),
            task(),
            (
                "unsolved",
                "rule",
                "budget exhausted (budget:max_tokens)",
                "budget_exhausted",
                1,
                False,
            ),
        ),
        (budget, task(), ("unsolved", "rule", "budget exhausted", "budget_exhausted", 1, False)),
        (
            traj(status=Status.context_overflow, answer=None),
            task(),
            (
                "unsolved",
                "rule",
                "context overflow: the conversation no longer fits the model's context",
                "context_overflow",
                0,
                False,
            ),
        ),
        (
            traj(status=Status.gave_up, answer=None, give_up_text=cannot, trial=3),
            task(),
            ("unsolved", "rule", "gave up on a solvable task", "gave_up", 3, False),
        ),
        (
            traj(status=Status.gave_up, answer=None, give_up_text=cannot),
            task(solvable=False),
            (
                "solved",
                "rule",
                "gave up with an explanation on an unsolvable task",
                "gave_up",
                0,
                False,
            ),
        ),
        (
            traj(status=Status.gave_up, answer=None),
            task(solvable=False),
            ("unsolved", "rule", "gave up without saying why", "gave_up", 0, False),
        ),
        (
            traj(answer=None).model_copy(update={"status": Status.answered}),
            task(),
            ("unsolved", "rule", "no Finish call", "answered", 0, False),
        ),
        (
            traj(answer="  "),
            task(),
            ("unsolved", "rule", "empty final answer", "answered", 0, False),
        ),
        (
            traj(answer="Paris", trial=4),
            task(checks=PARIS),
            ("solved", "check", "all checks pass", "answered", 4, False),
        ),
        (
            traj(answer=cannot),
            task(solvable=False),
            ("solved", "rule", "explains that the task cannot be done", "answered", 0, False),
        ),
        (
            traj(answer="42"),
            task(),
            ("unsure", "none", "no checks and no judge", "answered", 0, False),
        ),
    ]
    for t, tk, expected in cases:
        assert _labelled(t, tk) == expected


def test_failed_checks_are_listed_one_by_one_and_passed_checks_are_kept() -> None:
    two = [{"kind": "contains", "value": "Paris"}, {"kind": "contains", "value": "France"}]
    failed = label_episode(traj(answer="Lyon"), task(checks=two))
    assert failed.reason.startswith("failed checks: ") and failed.reason.count("; ") == 1
    assert [c.passed for c in failed.checks] == [False, False]
    solved = label_episode(traj(answer="Paris, France"), task(checks=two))
    assert [c.passed for c in solved.checks] == [True, True]


def test_only_an_unsure_label_left_to_no_method_goes_to_the_judge() -> None:
    unsure = label_episode(traj(answer="42"), task())
    assert needs_judge(unsure)
    assert not needs_judge(unsure.model_copy(update={"label": "unsolved"}))
    assert not needs_judge(unsure.model_copy(update={"method": "rule"}))


def _calls_only_task(calls_only: bool = True) -> Task:
    from mock_tools.worlds.task import TaskWorld

    world = TaskWorld.model_validate({"checks": {"gold": False, "calls_only": calls_only}})
    return task().model_copy(update={"world": world})


def _with_world(t: Trajectory, *passed: bool) -> Trajectory:
    checks = [{"kind": "turn", "passed": p, "detail": f"turn {i}"} for i, p in enumerate(passed)]
    world = {"world": "w", "initial": "a", "final": "b", "checks": checks}
    return t.model_copy(update={"world": world})


def test_a_calls_only_task_is_labelled_by_its_state_checks_however_it_ended() -> None:
    """BFCL's rule: an entry is its calls; a give-up, a spent budget, no answer or an agent
    error after every turn passed is solved, and one failed turn is unsolved."""
    t = _calls_only_task()
    for status, answer in [
        (Status.gave_up, None),
        (Status.budget_exhausted, None),
        (Status.answered, ""),
        (Status.context_overflow, None),
    ]:
        label = label_episode(_with_world(traj(status=status, answer=answer), True, True), t)
        assert (label.label, label.method) == ("solved", "check"), status
        assert label.reason == "every state check passes"
        failed = label_episode(_with_world(traj(status=status, answer=answer), True, False), t)
        assert (failed.label, failed.method) == ("unsolved", "check"), status
        assert failed.reason == "failed checks: state:turn: turn 1"
    errored = traj(status=Status.error, answer=None)
    errored.errors = [ErrorRecord(kind="agent", message="reply too large")]
    assert label_episode(_with_world(errored, True), t).label == "solved"


def test_a_calls_only_task_without_recorded_checks_is_unsolved() -> None:
    label = label_episode(traj(status=Status.gave_up, answer=None), _calls_only_task())
    assert (label.label, label.reason) == ("unsolved", "no state checks were recorded")


def test_infra_errors_stay_left_out_of_a_calls_only_task() -> None:
    t = traj(status=Status.error, answer=None)
    t.errors = [ErrorRecord(kind="infra", message="down")]
    label = label_episode(_with_world(t, True), _calls_only_task())
    assert label.excluded == "infra"


def test_without_calls_only_the_episodes_end_still_decides() -> None:
    t = _with_world(traj(status=Status.gave_up, answer=None), True)
    assert label_episode(t, _calls_only_task(False)).reason == "gave up on a solvable task"


def _stops_judged_task(judged: bool = True) -> Task:
    from mock_tools.worlds.task import TaskWorld

    world = TaskWorld.model_validate({"checks": {"gold": True, "stops_judged": judged}})
    return task().model_copy(update={"world": world})


def test_a_give_up_in_a_task_whose_stops_are_judged_is_judged_on_what_it_left() -> None:
    """τ²'s rule: an agent that stops is graded on the state it left, like one that answered;
    its failed checks still fail it, and a spent budget is still unsolved."""
    t = _stops_judged_task()
    gave_up = traj(status=Status.gave_up, answer=None)
    label = label_episode(_with_world(gave_up, True), t)
    assert (label.label, label.method) == ("solved", "check")
    assert label.reason == "stopped, and every check passes"
    assert label_episode(_with_world(gave_up, False), t).label == "unsolved"
    assert label_episode(gave_up, t).reason == "gave up, and nothing to judge it on"
    spent = _with_world(traj(status=Status.budget_exhausted, answer=None), True)
    assert label_episode(spent, t).label == "unsolved"
    # without the rule, the same give-up is unsolved whatever it left
    plain = _stops_judged_task(False)
    assert label_episode(_with_world(gave_up, True), plain).reason == "gave up on a solvable task"
