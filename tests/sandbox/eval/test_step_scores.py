import pytest
from _step_builders import APIS, REF_STEPS, call, chain, finish_node, make_task, reference_chain

from agents.trajectory import ErrorRecord, Node, Status
from mock_tools.names import NameResolver
from sandbox.errors import RunError
from sandbox.eval.steps.actions import actions_of, reference_actions
from sandbox.eval.steps.plan_score import plan_score
from sandbox.eval.steps.review_score import review_scores
from sandbox.eval.steps.step_scores import (
    DIMENSIONS,
    dimension_values,
    score_episode,
    score_episodes,
    score_run,
    summarise,
)

TASK = make_task()
RESOLVER = NameResolver.for_apis(APIS)
REVIEW = ("review_recovery", "review_no_repeat")


def test_reference_trajectory_scores_one_everywhere_it_applies():
    s = score_episode(reference_chain(), TASK, APIS)
    for name, m in s.dimensions().items():
        if name in REVIEW:
            assert m.value is None  # nothing failed
        else:
            assert m.value == 1.0, name
    # one unit per reference step (argument accuracy is averaged per step, UltraTool's way)
    assert s["instruct"].n == 4 and s["understand_exact"].n == 3 and s["reason"].n == 3
    assert s.efficiency.tool_calls == 3 and s.efficiency.redundant_calls == 0
    assert s.tree.nodes == 4 and s.tree.backtracks == 0


def test_a_flawed_episode_scores_lower_on_the_right_dimensions():
    geo_fail = call("maps", "geocode", {"address": "Paris"}, ok=False, provenance="fault:http_500")
    traj = chain(
        [
            ("Find where Paris is.", [geo_fail]),
            ("Retry the geocoder.", [call("maps", "geocode", {"address": "Paris"})]),
            ("Forecast please", [call("weatherly", "get_forecast", {"city": "Paris", "days": 5})]),
            ("oops", [call("weatherly", "get_weather", {}, raw="{bad")]),
        ]
    )
    s = score_episode(traj, TASK, APIS)
    assert s["instruct"].value == pytest.approx(4 / 5)  # the unparseable turn
    assert s["selection_precision"].value == 1.0 and s["selection_recall"].value == 1.0
    # per reference step: geocode 1 (address exact); get_weather 1/2 (the bad call has no
    # arguments: city missing 0, unit is the schema default 1); forecast 1/2 (days wrong)
    assert s["understand_exact"].value == pytest.approx((1 + 0.5 + 0.5) / 3)
    plan = plan_score(actions_of(traj.chosen(), APIS, RESOLVER), reference_actions(REF_STEPS, APIS))
    assert plan.in_order == 2
    assert s["plan_precision"].value == pytest.approx(2 / 4)
    assert s["plan_recall"].value == pytest.approx(2 / 3)
    assert s["review_recovery"].value == 1.0 and s["review_no_repeat"].value == 1.0
    review = review_scores(actions_of(traj.chosen(), APIS, RESOLVER), traj.status)
    assert review.failures == 1 and review.repeats_after_failure == 1
    assert s.efficiency.redundant_calls == 1
    assert 0 < s["reason"].value < 1


def test_dfsdt_is_scored_on_the_chosen_path():
    traj = reference_chain()
    wrong = Node(
        id=4,
        parent=0,
        depth=2,
        kind="action",
        calls=[call("weatherly", "get_weather", {"city": "Lyon"})],
    )
    traj.nodes.append(wrong)  # an abandoned branch after the first step
    s = score_episode(traj, TASK, APIS)
    assert s["plan_f1"].value == 1.0 and s["selection_precision"].value == 1.0
    assert s.tree.nodes == 5 and s.tree.backtracks == 1
    assert s["instruct"].n == 5  # format counts every turn of the tree


def test_unsolvable_task_without_a_path():
    task = make_task(steps=[], solvable=False)
    traj = chain([], status=Status.answered)
    s = score_episode(traj, task, APIS)
    for name in DIMENSIONS:
        if name != "instruct":
            assert s.dimensions()[name].value is None, name
    assert s["instruct"].value == 1.0


def test_summary_means_counts_and_infra_exclusion():
    good = score_episode(reference_chain(), TASK, APIS)
    empty = chain([], status=Status.gave_up, finish=False)
    empty.nodes = [Node(id=0, kind="invalid", format_error="no call")]
    empty.chosen_path = [0]
    bad = score_episode(empty, TASK, APIS)
    infra = chain([], status=Status.error, finish=False)
    infra.errors = [ErrorRecord(kind="infra", message="endpoint down")]
    infra_scores = score_episode(infra, TASK, APIS)
    summary = summarise([good, bad, infra_scores])
    assert summary.episodes == 3 and summary.scored == 2 and summary.excluded_infra == 1
    assert summary.dimensions["plan_f1"].mean == 0.5 and summary.dimensions["plan_f1"].n == 2
    assert summary.dimensions["instruct"].units == 5
    assert summary.dimensions["selection_precision"].n == 1  # nothing called in `bad`
    assert summary.dimensions["review_recovery"].mean is None
    assert summary.efficiency["tool_calls"] == 1.5
    assert dimension_values([good, bad, infra_scores], "plan_f1") == [1.0, 0.0]
    with pytest.raises(KeyError):
        dimension_values([good], "charm")


def test_score_run_and_deterministic_json():
    trajs = [reference_chain(), reference_chain()]
    a = score_run(trajs, {"t1": TASK}, APIS)
    b = score_run(trajs, {"t1": TASK}, APIS)
    assert a.model_dump_json() == b.model_dump_json()
    assert a.dimensions["plan_f1"].mean == 1.0 and a.dimensions["plan_f1"].n == 2
    assert len(score_episodes(trajs, {"t1": TASK}, APIS)) == 2


def test_unknown_scenario_is_a_run_error():
    with pytest.raises(RunError, match="no task"):
        score_run([reference_chain()], {}, APIS)


def test_finish_only_recorded_as_finish_field():
    traj = reference_chain()
    last = traj.nodes[-1]
    traj.nodes[-1] = finish_node(last.id, last.parent, depth=last.depth).model_copy(
        update={"calls": []}
    )
    s = score_episode(traj, TASK, APIS)
    assert s["instruct"].value == 1.0 and s["plan_f1"].value == 1.0
    assert s["plan_recall"].n == len(REF_STEPS)
