"""Divergence detection of a replay: every way a re-run can leave its recording is reported, at
the first node (or episode field) where it does, and a faithful re-run is reproduced.

The recorded episode is a hand-built DFSDT tree: a first branch that gave up, then a second
branch that answered (the chosen path)."""

from __future__ import annotations

import json

from agents.toolenv import Observation
from agents.trajectory import Component, FinishCall, Node, Status, StepCall, Trajectory
from sandbox.replay import compare_trajectories


def _call(content: str, *, ok: bool = True) -> StepCall:
    return StepCall(
        id="c0",
        name="search",
        arguments='{"q": "a"}',
        args={"q": "a"},
        observation=Observation(ok=ok, content=content),
    )


def _answer(content: str = "found") -> str:
    return json.dumps({"error": "", "response": content})


def recorded() -> Trajectory:
    nodes = [
        Node(id=0, parent=None, depth=1, kind="action", calls=[_call(_answer("nothing"))]),
        Node(id=1, parent=0, depth=2, kind="give_up", finish=FinishCall(return_type="give_up")),
        Node(id=2, parent=None, depth=1, kind="action", calls=[_call(_answer())]),
        Node(
            id=3,
            parent=2,
            depth=2,
            kind="finish",
            finish=FinishCall(return_type="give_answer", final_answer="found"),
        ),
    ]
    return Trajectory(
        scenario_id="t",
        agent=Component(name="dfsdt"),
        model=Component(name="m"),
        status=Status.answered,
        end_reason="answered",
        final_answer="found",
        chosen_path=[2, 3],
        nodes=nodes,
    )


def test_a_faithful_re_run_is_reproduced_and_every_call_counted() -> None:
    verdict = compare_trajectories(recorded(), recorded())
    assert verdict.ok and verdict.first_diff is None
    assert (verdict.calls_checked, verdict.calls_matched, verdict.calls_exact) == (2, 2, 2)


def test_a_re_run_that_chose_another_path_is_divergent() -> None:
    """Same nodes, same answer, but the episode's chosen path differs: not reproduced."""
    got = recorded()
    got.chosen_path = [0, 1]
    diff = compare_trajectories(recorded(), got).first_diff
    assert diff is not None and (diff.node, diff.field) == (None, "chosen_path")
    assert (diff.expected, diff.got) == ([2, 3], [0, 1])


def test_a_re_run_that_grew_a_node_more_is_divergent_at_that_node() -> None:
    """The replay went on searching after the recorded end: the first extra node is named."""
    got = recorded()
    got.nodes.append(Node(id=4, parent=None, depth=1, kind="thought", content="more"))
    diff = compare_trajectories(recorded(), got).first_diff
    assert diff is not None and (diff.node, diff.field, diff.expected, diff.got) == (
        4,
        "node",
        None,
        "thought",
    )


def test_a_re_run_that_stopped_early_is_divergent_at_the_missing_node() -> None:
    got = recorded()
    got.nodes.pop()
    diff = compare_trajectories(recorded(), got).first_diff
    assert diff is not None and (diff.node, diff.field, diff.expected, diff.got) == (
        3,
        "node",
        "finish",
        None,
    )


def test_a_call_that_failed_live_and_succeeded_in_replay_is_divergent() -> None:
    """Same observation text, but the recorded call failed and the replayed one did not."""
    want = recorded()
    want.nodes[2].calls[0].observation = Observation(ok=False, content=_answer())
    diff = compare_trajectories(want, recorded()).first_diff
    assert diff is not None and (diff.node, diff.field) == (2, "calls[0].ok")
    assert (diff.expected, diff.got) == (False, True)


def test_a_call_that_observed_something_else_is_divergent_at_its_node() -> None:
    got = recorded()
    got.nodes[2].calls[0].observation = Observation(ok=True, content=_answer("other"))
    verdict = compare_trajectories(recorded(), got)
    diff = verdict.first_diff
    assert diff is not None and (diff.node, diff.field) == (2, "calls[0].observation")
    assert (diff.expected, diff.got) == (_answer(), _answer("other"))
    assert (verdict.calls_checked, verdict.calls_matched, verdict.calls_exact) == (2, 1, 1)


def test_the_final_status_and_answer_are_compared_after_the_nodes() -> None:
    got = recorded()
    got.final_answer = "something else"
    diff = compare_trajectories(recorded(), got).first_diff
    assert diff is not None and (diff.node, diff.field) == (None, "final_answer")
    got.status = Status.gave_up
    diff = compare_trajectories(recorded(), got).first_diff
    assert diff is not None and (diff.field, diff.expected, diff.got) == (
        "status",
        Status.answered,
        Status.gave_up,
    )
