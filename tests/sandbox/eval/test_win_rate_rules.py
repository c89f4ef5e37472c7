"""The ``default`` protocol's win-rate rules and the win summary, case by case.

Expected winners, rules, counts and rates are worked out by hand from the rules in
``sandbox/eval/win_rate.py``'s module doc and docs/evaluation.md ("Win rate"), never read back
from the code's output."""

from __future__ import annotations

import pytest
from outcome_builders import call, task, traj

from agents.toolenv import Observation
from agents.trajectory import Node, Status, StepCall
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.stats import bootstrap_ci
from sandbox.eval.win_rate import (
    EpisodeFacts,
    PairOutcome,
    compare_episode,
    compare_runs,
    episode_facts,
    judged,
    mirror,
    pair_keys,
    summarise_wins,
)


def _label(task_id: str, label: str, trial: int = 0) -> EpisodeLabel:
    scores = {"solved": 1.0, "unsure": 0.5, "unsolved": 0.0}
    return EpisodeLabel(
        task_id=task_id, trial=trial, label=label, score=scores[label], method="rule", reason="r"
    )


def _untooled(name: str, ok: bool | None, i: int) -> StepCall:
    """A call whose name resolved to no tool (``tool`` None); ``ok`` None: no observation."""
    observation = None if ok is None else Observation(ok=ok, content="{}")
    return StepCall(id=f"u{i}", name=name, arguments="{}", observation=observation)


# -- what the rules look at ------------------------------------------------------------------


def test_facts_count_successful_calls_and_distinct_apis_of_the_path() -> None:
    """A successful call is one with an observation that is ok; a call without an observation
    (never answered) or with a failed one is not. Distinct tools are (tool, api) pairs, or the
    name itself for a call that resolved to no tool."""
    t = traj(
        calls=[
            [call("add", i=0), call("add", i=1), call("add", tool="other", i=2)],
            [_untooled("ghost", True, 3), _untooled("ghost", False, 4)],
            [_untooled("silent", None, 5), call("mul", ok=False, i=6)],
        ],
        answer="  the answer  ",
    )
    facts = episode_facts(t, _label("t1", "solved"))
    # ok: add, add, add@other, ghost -> 4; distinct: calc.add, other.add, ghost, silent, calc.mul
    assert facts == EpisodeFacts(
        solved=True,
        steps=4,
        successful_calls=4,
        distinct_tools=5,
        answer="the answer",
        present=True,
    )


def test_one_api_called_under_two_names_is_one_distinct_tool() -> None:
    """Distinct tools are the APIs reached, not the names written: ToolBench's suffix rule lets
    a shortened name reach the same API."""
    short = call("add", i=1).model_copy(update={"name": "add_for_calc_v2"})
    facts = episode_facts(traj(calls=[[call("add", i=0), short]]), None)
    assert (facts.successful_calls, facts.distinct_tools) == (2, 1)


def test_facts_of_an_episode_without_a_chosen_path_read_every_node() -> None:
    """An episode cut short before it chose a path (a budget ran out) counts all its nodes."""
    t = traj(
        calls=[[call("add", i=0)], [call("mul", i=1)]], answer=None, status=Status.budget_exhausted
    )
    t.chosen_path = []
    t.nodes.append(Node(id=2, parent=0, kind="action", calls=[call("div", i=2)]))
    facts = episode_facts(t, None)
    assert (facts.steps, facts.successful_calls, facts.distinct_tools) == (3, 3, 3)
    assert facts.answer == "" and not facts.solved


@pytest.mark.parametrize("label", ["unsure", "unsolved"])
def test_only_the_solved_label_counts_as_solved(label: str) -> None:
    assert not episode_facts(traj(), _label("t1", label)).solved
    assert episode_facts(traj(), _label("t1", "solved")).solved


# -- one pair ----------------------------------------------------------------------------------


def test_an_outcome_names_its_task_and_trial_whichever_rule_decides() -> None:
    """Every rule's outcome carries the episode it is about (trial 3 here, not the default 0)."""
    solved = EpisodeFacts(solved=True, steps=2)
    cases = [
        (solved, EpisodeFacts(), "solved"),
        (solved, EpisodeFacts(solved=True, steps=3), "fewer_steps"),
        (solved, solved, "both_solved_same_steps"),
        (EpisodeFacts(successful_calls=1), EpisodeFacts(), "more_successful_calls"),
        (EpisodeFacts(), EpisodeFacts(), "both_failed_equal"),
    ]
    for cand, ref, rule in cases:
        out = compare_episode(cand, ref, "task-x", 3)
        assert (out.task_id, out.trial, out.rule) == ("task-x", 3, rule)


def test_an_outcome_without_a_trial_is_trial_0() -> None:
    assert compare_episode(EpisodeFacts(), EpisodeFacts(), "t").trial == 0


def test_both_failed_equal_is_for_a_judge_only_when_both_answered() -> None:
    """Nothing to compare when one side gave no answer: the tie is final."""
    answered, silent = EpisodeFacts(answer="a"), EpisodeFacts(answer="")
    assert compare_episode(answered, answered, "t").undecided
    assert not compare_episode(answered, silent, "t").undecided
    assert not compare_episode(silent, answered, "t").undecided
    assert not compare_episode(silent, silent, "t").undecided


def test_a_judge_decision_replaces_the_winner_and_names_the_rule() -> None:
    tie = compare_episode(EpisodeFacts(solved=True), EpisodeFacts(solved=True), "t", 2)
    for preferred, winner in ((0, "candidate"), (1, "reference")):
        out = judged(tie, preferred)
        assert (out.task_id, out.trial, out.winner, out.rule, out.decided_by) == (
            "t",
            2,
            winner,
            "better_answer",
            "judge",
        )
    kept = judged(tie, None)
    assert (kept.winner, kept.rule, kept.decided_by) == (
        "tie",
        "both_solved_same_steps+judge_tie",
        "judge",
    )


# -- pairing -----------------------------------------------------------------------------------


def test_pairs_are_every_seen_episode_of_the_tasks_in_task_order() -> None:
    """Keys from either side, trial by trial, in the tasks' order; a task neither side has is
    paired as its trial 0; an episode of a task outside ``tasks`` is left out."""
    tasks = [task("z"), task("a"), task("m")]
    cand = {("a", 1): None, ("z", 0): None, ("gone", 0): None}
    ref = {("a", 0): None, ("a", 1): None, ("z", 2): None}
    assert pair_keys(cand, ref, tasks) == [("z", 0), ("z", 2), ("a", 0), ("a", 1), ("m", 0)]


def test_a_labelled_episode_without_a_trajectory_is_still_paired() -> None:
    """A label with no trajectory (a missing episode) is a key of the comparison: it is compared
    as absent (no steps, no calls), so an attempt with a successful call beats it."""
    tasks = [task("a")]
    cand = [traj("a", trial=1, answer=None, status=Status.gave_up, calls=[[call("add")]])]
    outcomes = compare_runs(
        cand,
        [_label("a", "unsolved", trial=1)],
        [],
        [_label("a", "unsolved", trial=1), _label("a", "unsolved", trial=2)],
        tasks,
    )
    assert [(o.trial, o.winner, o.rule) for o in outcomes] == [
        (1, "candidate", "more_successful_calls"),
        (2, "tie", "both_failed_equal"),
    ]


# -- the summary -------------------------------------------------------------------------------


def _outcome(task_id: str, winner: str, trial: int = 0, **kw: object) -> PairOutcome:
    return PairOutcome(task_id=task_id, trial=trial, winner=winner, rule="r", **kw)


def test_the_summary_counts_rates_and_lists_by_hand() -> None:
    """Two tasks of two trials and a judge error on trial 2 of a third task.

    Counted: a#0 candidate, a#1 tie, b#0 reference, b#1 candidate -> 2 wins, 1 loss, 1 tie;
    win rate (ties half) 2.5/4, ToolEval's (ties 0) 2/4, tie rate 1/4. The intervals are the
    task-clustered bootstrap of the per-episode values with the summary's seed."""
    outcomes = [
        _outcome("a", "candidate"),
        _outcome("a", "tie", trial=1).model_copy(update={"rule": "both_failed_equal"}),
        _outcome("b", "reference").model_copy(update={"rule": "solved"}),
        _outcome("b", "candidate", trial=1).model_copy(update={"rule": "fewer_steps"}),
        _outcome("c", "tie", trial=2, judge_error="judge down"),
    ]
    s = summarise_wins(outcomes, candidate="new", reference="old", seed=5)
    assert (s.candidate, s.reference, s.n, s.wins, s.losses, s.ties) == ("new", "old", 4, 2, 1, 1)
    assert s.win_rate.value == pytest.approx(2.5 / 4)
    assert s.tooleval_win_rate.value == pytest.approx(2 / 4)
    assert s.tie_rate == pytest.approx(1 / 4) and s.tie_value == 0.5
    assert list(s.by_rule.items()) == [
        ("both_failed_equal", 1),
        ("fewer_steps", 1),
        ("r", 1),
        ("solved", 1),
    ]
    assert s.judge_errors == ["c#2"]
    assert s.outcomes == outcomes  # the judge error is kept in the outcomes, not counted
    clusters = ["a", "a", "b", "b"]
    assert s.win_rate == bootstrap_ci([1.0, 0.5, 0.0, 1.0], seed=5, clusters=clusters)
    assert s.tooleval_win_rate == bootstrap_ci([1.0, 0.0, 0.0, 1.0], seed=5, clusters=clusters)


def _uneven() -> list[PairOutcome]:
    """Tasks ``t1``..``t6`` with 1 to 6 trials, winners in a cycle."""
    cycle = ["candidate", "tie", "reference", "candidate", "reference"]
    return [
        _outcome(f"t{n}", cycle[(n + trial) % 5], trial=trial)
        for n in range(1, 7)
        for trial in range(n)
    ]


def test_the_summary_intervals_follow_its_seed() -> None:
    """The same outcomes with another seed draw other resamples (the seed reaches both rates).
    Tasks with 1 to 6 trials make the resampled means (sums over counts) nearly continuous."""
    outcomes = _uneven()
    one = summarise_wins(outcomes, candidate="c", reference="r", seed=1)
    two = summarise_wins(outcomes, candidate="c", reference="r", seed=2)
    assert one.win_rate.value == two.win_rate.value
    assert (one.win_rate.low, one.win_rate.high) != (two.win_rate.low, two.win_rate.high)
    assert (one.tooleval_win_rate.low, one.tooleval_win_rate.high) != (
        two.tooleval_win_rate.low,
        two.tooleval_win_rate.high,
    )


def test_the_summary_keeps_the_tie_value_and_defaults_to_seed_0() -> None:
    winners = ["candidate", "tie", "reference", "candidate", "tie"]
    outcomes = [_outcome(f"t{i}", w, trial=i % 2) for i, w in enumerate(winners)]
    zero = summarise_wins(outcomes, candidate="c", reference="r", tie_value=0.0)
    assert zero.tie_value == 0.0 and zero.win_rate.value == pytest.approx(2 / 5)
    assert summarise_wins(outcomes, candidate="c", reference="r").tie_value == 0.5
    uneven = _uneven()
    unseeded = summarise_wins(uneven, candidate="c", reference="r")
    assert unseeded == summarise_wins(uneven, candidate="c", reference="r", seed=0)
    assert unseeded != summarise_wins(uneven, candidate="c", reference="r", seed=1)


def test_a_summary_of_judge_errors_only_has_no_rates() -> None:
    s = summarise_wins([_outcome("a", "tie", judge_error="x")], candidate="c", reference="r")
    assert (s.n, s.wins, s.losses, s.ties, s.tie_rate) == (0, 0, 0, 0, 0.0)
    assert (s.win_rate.value, s.win_rate.n) == (0.0, 0) and s.judge_errors == ["a"]


def test_the_mirror_swaps_the_winner_of_every_round() -> None:
    out = _outcome("a", "candidate", rounds=["candidate", "reference", "tie"])
    back = mirror(out)
    assert back.winner == "reference" and back.rounds == ["reference", "candidate", "tie"]
    assert mirror(_outcome("a", "tie")).winner == "tie"
    assert mirror(back) == out
