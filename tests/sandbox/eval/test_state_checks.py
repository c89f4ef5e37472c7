"""A run's state checks summed over its episodes (``sandbox.eval.state_checks``), on hand-built
labels: which episodes count, how a check of several instances passes, pass@k / pass^k over
trials with their intervals, each check of each task, and the labels a rule decided carrying
their episode's state checks (``pass_rate.label_episode``)."""

from __future__ import annotations

from typing import Any

import pytest
from outcome_builders import task, traj

from agents.trajectory import Status
from mock_tools.models import Reference, RefStep, Task
from mock_tools.worlds.task import TaskWorld
from sandbox.eval.checks import CheckResult
from sandbox.eval.pass_rate import EpisodeLabel, label_episode
from sandbox.eval.report import state_checks_section
from sandbox.eval.state_checks import (
    StateChecks,
    check_cell,
    episode_checks,
    state_checks,
    task_checks,
)
from sandbox.eval.stats import Interval, bootstrap_ci, mean_pass_at_k, mean_pass_hat_k


def label(
    task_id: str,
    trial: int,
    *checks: tuple[str, bool],
    excluded: Any = None,
    answer_checks: tuple[bool, ...] = (),
) -> EpisodeLabel:
    """A label whose checks are ``answer_checks`` (kind ``contains``), then ``checks`` as
    ``state:<check>`` results."""
    results = [
        CheckResult(index=i, kind="contains", passed=ok) for i, ok in enumerate(answer_checks)
    ]
    results += [
        CheckResult(index=len(results) + i, kind=f"state:{kind}", passed=ok, detail=kind)
        for i, (kind, ok) in enumerate(checks)
    ]
    solved = all(r.passed for r in results)
    return EpisodeLabel(
        task_id=task_id,
        trial=trial,
        label="solved" if solved else "unsolved",
        score=1.0 if solved else 0.0,
        method="check",
        checks=results,
        excluded=excluded,
    )


def summary(labels: list[EpisodeLabel], tasks: list[Task] | None = None) -> StateChecks:
    found = state_checks(labels, tasks, seed=3)
    assert found is not None
    return found


def test_no_state_check_anywhere_is_no_summary() -> None:
    plain = [label("a", 0, answer_checks=(True,)), label("b", 0, answer_checks=(False,))]
    assert state_checks(plain) is None
    assert state_checks([]) is None
    excluded = [label("a", 0, ("gold", True), excluded="infra")]
    assert state_checks(excluded) is None  # only episodes that count are summed


def test_each_check_counts_the_episodes_judged_on_it_and_those_that_passed() -> None:
    labels = [
        label("a", 0, ("gold", True), ("assert", True), ("assert", False)),
        label("a", 1, ("gold", False), ("assert", True), ("assert", True)),
        label("b", 0, ("gold", True), ("forbid_action", True), answer_checks=(False,)),
        label("b", 1, ("gold", True), ("forbid_action", False)),
        label("c", 0, answer_checks=(True,)),  # no state check: unjudged
        label("c", 1, ("gold", True), excluded="infra"),  # left out of every figure
    ]
    found = summary(labels)
    by = {r.check: r for r in found.checks}
    assert [r.check for r in found.checks] == ["gold", "assert", "forbid_action"]
    assert (by["gold"].episodes, by["gold"].passed, by["gold"].tasks) == (4, 3, 2)
    # two assertions in one episode: it passes "assert" only when both hold
    assert (by["assert"].episodes, by["assert"].passed, by["assert"].tasks) == (2, 1, 1)
    assert (by["forbid_action"].episodes, by["forbid_action"].passed) == (2, 1)
    # all: every state check of the episode (answer checks are not state checks)
    assert (found.all.check, found.all.episodes, found.all.passed, found.all.tasks) == (
        "all",
        4,
        1,
        2,
    )
    assert found.unjudged == 1 and found.diverged == []
    assert found.rates() == [found.all, *found.checks]


def test_the_rate_is_the_task_clustered_bootstrap_of_the_pass_rate() -> None:
    labels = [
        label("a", 0, ("gold", True)),
        label("a", 1, ("gold", False)),
        label("b", 0, ("gold", True)),
        label("b", 1, ("gold", True)),
        label("c", 0, ("gold", False)),
        label("c", 1, ("gold", False)),
    ]
    found = summary(labels)
    values = [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    expected = bootstrap_ci(values, seed=3, clusters=["a", "a", "b", "b", "c", "c"])
    assert found.checks[0].rate == expected
    assert expected.low < expected.value == 0.5 < expected.high  # a real interval
    assert found.checks[0].rate != bootstrap_ci(values, seed=3)  # resampled by task


def test_pass_at_k_and_pass_hat_k_per_task_with_intervals_over_tasks() -> None:
    labels = [label("a", i, ("gold", ok)) for i, ok in enumerate([True, False, True])]
    labels += [label("b", i, ("gold", ok)) for i, ok in enumerate([False, False])]
    labels += [label("c", i, ("gold", ok)) for i, ok in enumerate([True, True, True])]
    gold = summary(labels).checks[0]
    counts = [(3, 2), (2, 0), (3, 3)]
    assert list(gold.pass_at_k) == ["1", "2"] == list(gold.pass_hat_k)  # up to the fewest trials
    for k in (1, 2):
        at, hat = gold.pass_at_k[str(k)], gold.pass_hat_k[str(k)]
        assert at.value == pytest.approx(mean_pass_at_k(counts, k))
        assert hat.value == pytest.approx(mean_pass_hat_k(counts, k))
        assert at.n == hat.n == 3  # one value per task
        assert at.low <= at.value <= at.high and hat.low <= hat.value <= hat.high
    assert gold.pass_hat_k["2"].value == pytest.approx((1 / 3 + 0 + 1) / 3)
    assert gold.pass_at_k["2"].value == pytest.approx((1 + 0 + 1) / 3)
    assert gold.pass_hat_k["2"].high > gold.pass_hat_k["2"].low  # tasks differ: an interval


def test_one_trial_of_a_task_gives_no_pass_at_k() -> None:
    labels = [label("a", 0, ("gold", True)), label("a", 1, ("gold", True))]
    labels.append(label("b", 0, ("gold", False)))
    gold = summary(labels).checks[0]
    assert gold.pass_at_k == {} and gold.pass_hat_k == {}


def test_a_diverged_replay_fails_all_but_is_no_check_of_its_own() -> None:
    labels = [
        label("a", 0, ("replay", False), ("gold", True)),
        label("a", 1, ("gold", True)),
    ]
    found = summary(labels)
    assert [r.check for r in found.checks] == ["gold"]
    assert (found.checks[0].passed, found.all.passed, found.all.episodes) == (2, 1, 2)
    assert found.diverged == ["a"]  # trial 0 is shown as the task alone


def test_checks_follow_the_order_they_are_judged_in_then_by_name() -> None:
    one = label(
        "a",
        0,
        ("zeta", True),
        ("require_action", True),
        ("alpha", True),
        ("forbid_state", True),
        ("assert", True),
        ("forbid_action", True),
        ("gold", True),
    )
    order = [r.check for r in summary([one]).checks]
    assert order == [
        "gold",
        "assert",
        "forbid_state",
        "forbid_action",
        "require_action",
        "alpha",
        "zeta",
    ]


def world_task(task_id: str, checks: dict[str, Any], *, steps: int = 1) -> Task:
    base = task(task_id)
    reference = Reference(
        steps=[RefStep(tool="bank", api="get", args={"id": str(i)}) for i in range(steps)]
    )
    return base.model_copy(
        update={"world": TaskWorld.model_validate({"checks": checks}), "reference": reference}
    )


BANK_CHECKS = {
    "ignore": ["transfers.*.at"],
    "assert": [
        {"path": "accounts.A-3.balance", "equals": 500},
        {"path": "transfers", "where": {"source": "A-1"}, "count": 1},
    ],
    "forbid": {
        "states": [{"path": "accounts.A-1.balance", "lt": 0}],
        "actions": [{"api": "transfer", "args": {"source": "A-3"}}],
    },
    "require": {"actions": [{"api": "transfer", "args": {"target": "A-3"}}]},
}


def test_a_tasks_checks_are_described_in_the_order_their_results_come() -> None:
    described = task_checks(world_task("pay", BANK_CHECKS))
    assert described == [
        ("gold", "the final state equals the gold state (paths left out: transfers.*.at)"),
        ("assert", "accounts.A-3.balance equals 500"),
        ("assert", "transfers where {'source': 'A-1'} count 1"),
        ("forbid_state", "accounts.A-1.balance lt 0.0"),
        ("forbid_action", "transfer(source='A-3')"),
        ("require_action", "transfer(target='A-3')"),
    ]
    assert task_checks(world_task("no_gold", {"gold": False}))[:1] == []
    assert task_checks(world_task("no_steps", {}, steps=0)) == []  # gold needs gold actions
    assert task_checks(task("plain")) == []
    assert task_checks(world_task("gold_only", {})) == [
        ("gold", "the final state equals the gold state")
    ]


def test_each_check_of_each_task_is_matched_by_its_place_among_its_kind() -> None:
    pay = world_task("pay", BANK_CHECKS)
    other = world_task("other", {"assert": [{"path": "accounts.A-1.frozen", "equals": True}]})
    results = [
        ("gold", True),
        ("assert", True),
        ("assert", False),
        ("forbid_state", True),
        ("forbid_action", True),
        ("require_action", False),
    ]
    flipped = [(kind, not ok) if kind == "assert" else (kind, ok) for kind, ok in results]
    labels = [label("pay", 0, *results), label("pay", 1, *flipped)]
    labels.append(label("other", 0, ("gold", True), ("assert", False)))
    rows = summary(labels, [pay, other, world_task("never_ran", {})]).tasks
    shown = [(r.task_id, r.check, r.description, r.passed, r.episodes) for r in rows]
    assert shown == [
        (
            "pay",
            "gold",
            "the final state equals the gold state (paths left out: transfers.*.at)",
            2,
            2,
        ),
        ("pay", "assert", "accounts.A-3.balance equals 500", 1, 2),
        ("pay", "assert", "transfers where {'source': 'A-1'} count 1", 1, 2),
        ("pay", "forbid_state", "accounts.A-1.balance lt 0.0", 2, 2),
        ("pay", "forbid_action", "transfer(source='A-3')", 2, 2),
        ("pay", "require_action", "transfer(target='A-3')", 0, 2),
        ("other", "gold", "the final state equals the gold state", 1, 1),
        ("other", "assert", "accounts.A-1.frozen equals True", 0, 1),
    ]
    assert summary(labels).tasks == []  # without the suite's tasks: no descriptions


def test_check_cell_shows_the_rate_the_counts_and_the_strictest_pass_hat_k() -> None:
    labels = [label("a", i, ("gold", ok)) for i, ok in enumerate([True, True, False])]
    labels += [label("b", i, ("gold", True)) for i in range(3)]
    gold = summary(labels).checks[0]
    assert check_cell(gold).startswith(f"{100 * gold.rate.value:.1f}% [")
    assert check_cell(gold).endswith(f"(5/6); pass^3 {100 * gold.pass_hat_k['3'].value:.1f}%")
    assert gold.pass_hat_k["3"].value == pytest.approx(0.5)
    single = summary([label("a", 0, ("gold", False))]).checks[0]
    assert check_cell(single) == "0.0% [0.0, 0.0] (0/1)"
    many = gold.model_copy(
        update={"pass_hat_k": {str(k): Interval(value=k / 20, low=0, high=1, n=1) for k in (2, 10)}}
    )
    assert check_cell(many).endswith("pass^10 50.0%")  # the largest k as a number, not as text


def test_episode_checks_reads_only_the_state_results() -> None:
    lb = label("a", 0, ("gold", False), ("assert", True), answer_checks=(True, False))
    assert episode_checks(lb) == [("gold", False), ("assert", True)]


WORLD = {
    "world": "bank",
    "initial": "i",
    "final": "f",
    "gold": "g",
    "checks": [
        {"kind": "gold", "passed": False, "detail": "collateral: accounts.A-2.balance"},
        {"kind": "forbid_state", "passed": True, "detail": "never reached"},
    ],
    "diff": None,
    "divergence": None,
}


def test_a_label_a_rule_decided_carries_the_state_checks_of_its_episode() -> None:
    """Before: a give-up, an error or a spent budget had no state check in its label, so the
    state checks of a run were summed over the answered episodes only."""
    gave_up = traj(status=Status.gave_up, answer=None, give_up_text="stuck")
    gave_up.world = WORLD
    lb = label_episode(gave_up, task())
    assert (lb.label, lb.method, lb.reason) == ("unsolved", "rule", "gave up on a solvable task")
    assert [(c.index, c.kind, c.passed, c.detail) for c in lb.checks] == [
        (0, "state:gold", False, "collateral: accounts.A-2.balance"),
        (1, "state:forbid_state", True, "never reached"),
    ]
    budget = traj(status=Status.budget_exhausted, answer="x")
    budget.world = {**WORLD, "divergence": "node 1: another state"}
    kinds = [c.kind for c in label_episode(budget, task()).checks]
    assert kinds == ["state:replay", "state:gold", "state:forbid_state"]
    assert label_episode(traj(status=Status.gave_up, answer=None), task()).checks == []
    assert label_episode(None, task()).checks == []


def test_an_answered_world_episode_numbers_its_state_checks_after_the_answer_checks() -> None:
    answered = traj(answer="Paris")
    answered.world = WORLD
    lb = label_episode(answered, task(checks=[{"kind": "contains", "value": "Paris"}]))
    assert [(c.index, c.kind) for c in lb.checks] == [
        (0, "contains"),
        (1, "state:gold"),
        (2, "state:forbid_state"),
    ]
    assert (lb.label, lb.method) == ("unsolved", "check")


def test_report_md_lists_each_check_and_the_task_checks_that_failed() -> None:
    pay = world_task("pay", {"assert": [{"path": "accounts.A-3.balance", "equals": 500}]})
    labels = [
        label("pay", 0, ("gold", True), ("assert", False)),
        label("pay", 1, ("replay", False), ("gold", True), ("assert", True)),
        label("pay", 2, answer_checks=(True,)),
    ]
    found = summary(labels, [pay])
    text = "\n".join(state_checks_section(found))
    assert "| check | tasks | episodes | passed | rate [95% CI] |" in text
    assert "| gold | 1 | 2 | 2 | 100.0% [100.0, 100.0] |" in text
    assert "| assert | 1 | 2 | 1 | 50.0% [50.0, 50.0] |"  # one task: nothing to resample in text
    assert "| all | 1 | 2 | 0 | 0.0% [0.0, 0.0] |" in text
    assert "Episodes without a state check (no verdict): 1." in text
    assert "recorded states (every check fails): pay#1." in text
    assert "| pay | assert | accounts.A-3.balance equals 500 | 1/2 |" in text
    assert "| pay | gold |" not in text  # passed every time: not listed
    assert state_checks_section(None) == []
