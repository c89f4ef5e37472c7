"""The units behind each measure and the identities the counts use: a measure's ``n`` is what a
reader (and a pooled mean) weighs it by, so each metric's units are checked whole; redundant
calls are the same API (by any name) with the same canonical arguments; an empty tree has no
depth; scoring keeps each task's own reference and remembers only searched matchings."""

from __future__ import annotations

from _step_builders import APIS, REF_STEPS, call, chain, make_task

from agents.trajectory import Component, Status, Trajectory
from mock_tools.models import RefStep
from sandbox.eval.steps import STEP_METRICS
from sandbox.eval.steps.actions import Action
from sandbox.eval.steps.efficiency import TreeStats, redundant_calls, tree_stats
from sandbox.eval.steps.episode import ScoringContext
from sandbox.eval.steps.matching import MatchMemo, max_weight_pairs
from sandbox.eval.steps.measure import Measure, ratio
from sandbox.eval.steps.metric import ScoredMetric
from sandbox.eval.steps.review_score import ReviewScores, review_scores
from sandbox.eval.steps.step_scores import score_episode
from sandbox.eval.steps.tool_selection import ToolSelection, tool_selection

GOLD_APIS = [("maps", "geocode"), ("weatherly", "get_weather")]


def test_a_ratio_of_nothing_is_not_applicable_over_no_units() -> None:
    assert ratio(0, 0) == Measure(value=None, n=0)
    assert ratio(1, 4) == Measure(value=0.25, n=4)


def test_tool_selection_units_are_apis_and_one_episode() -> None:
    """Precision over the APIs called, recall over the reference's, F1 once per episode."""
    called = [Action(tool="maps", api="geocode", name="g"), Action(name="teleport")]
    assert tool_selection(called, GOLD_APIS) == ToolSelection(
        precision=Measure(value=0.5, n=2),
        recall=Measure(value=0.5, n=2),
        f1=Measure(value=0.5, n=1),
    )
    assert tool_selection([], GOLD_APIS) == ToolSelection(
        precision=Measure(), recall=Measure(value=0.0, n=2), f1=Measure(value=0.0, n=1)
    )


def test_no_failure_means_no_review_and_no_repeat() -> None:
    ok = Action(tool="maps", api="geocode", name="g", args={"address": "Paris"})
    assert review_scores([ok, ok], Status.answered) == ReviewScores(
        recovery=Measure(), no_blind_repeat=Measure(), failures=0, repeats_after_failure=0
    )


def test_the_plan_units_are_calls_reference_steps_and_one_episode() -> None:
    first = REF_STEPS[0]
    traj = chain([(first.thought, [call(first.tool, first.api, first.args)])] * 2)
    plan = ScoredMetric(STEP_METRICS.get("plan"))
    got = score_episode(traj, make_task(), APIS, metrics=[plan])
    assert got.metrics["plan"] == {
        "plan_precision": Measure(value=0.5, n=2),
        "plan_recall": Measure(value=1 / 3, n=3),
        "plan_f1": Measure(value=0.4, n=1),
    }


def test_the_plan_search_is_remembered_by_the_scoring_context() -> None:
    """The same call twice for one planned step needs a search: the context keeps it for the
    next episodes (the plan's matching, without the pairing's maximum-cardinality flag)."""
    first = REF_STEPS[0]
    traj = chain([(first.thought, [call(first.tool, first.api, first.args)])] * 2)
    ctx = ScoringContext(APIS)
    score_episode(
        traj, make_task(), APIS, context=ctx, metrics=[ScoredMetric(STEP_METRICS.get("plan"))]
    )
    assert [flag for flag, _ in ctx.matchings] == [False]


def test_a_graph_that_needs_no_search_is_not_remembered() -> None:
    """Disjoint edges of any positive weight (a plan's are below 1) are all taken at once."""
    memo: MatchMemo = {}
    assert max_weight_pairs([(0, 1, 0.9), (1, 0, 0.85)], memo=memo) == [(0, 1), (1, 0)]
    assert memo == {}


def geocode(address: str, name: str = "geocode_for_maps") -> Action:
    return Action(tool="maps", api="geocode", name=name, args={"address": address})


def test_redundant_calls_are_the_same_api_and_arguments_under_any_name() -> None:
    assert redundant_calls([geocode("Paris"), geocode("Paris", name="Geocode_For_Maps")]) == 1
    assert redundant_calls([geocode("Paris"), geocode("Lyon")]) == 0
    unknown = [
        Action(name="teleport", args={"to": "Paris"}),
        Action(name="warp", args={"to": "Paris"}),
    ]
    assert redundant_calls(unknown) == 0
    assert redundant_calls([*unknown, unknown[1]]) == 1


def test_an_empty_tree_has_no_depth() -> None:
    empty = Trajectory(
        scenario_id="t1",
        agent=Component(name="react"),
        model=Component(name="m"),
        status=Status.error,
    )
    assert tree_stats(empty, []) == TreeStats(nodes=0, chosen_length=0, backtracks=0, max_depth=0)


def test_each_task_object_gets_its_own_reference_actions() -> None:
    """Made once per task object; another task under the same id (a re-read suite) is not
    given the first one's reference."""
    ctx = ScoringContext(APIS)
    task = make_task()
    first = ctx.gold(task)
    assert ctx.gold(task) is first
    other = make_task([RefStep(thought="", tool="maps", api="geocode", args={"address": "Lyon"})])
    assert [a.args for a in ctx.gold(other)] == [{"address": "Lyon"}]
    assert [a.args for a in ctx.gold(task)] == [a.args for a in first]
