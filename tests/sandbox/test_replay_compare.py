"""Divergence detection of a replay: every way a re-run can leave its recording is reported, at
the first node (or episode field) where it does, and a faithful re-run is reproduced.

The recorded episode is a hand-built DFSDT tree: a first branch that gave up, then a second
branch that answered (the chosen path)."""

from __future__ import annotations

import json
from typing import Any

from agents.toolenv import Observation
from agents.trajectory import Component, FinishCall, Node, Status, StepCall, Trajectory
from sandbox.replay import EpisodeVerdict, StepDiff, compare_trajectories
from sandbox.replay.replay import _replay_episode_calls


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


def test_a_difference_reads_with_its_place_and_both_values_shortened_to_160_characters() -> None:
    """How a divergence is shown to the user: where (a node, or the episode itself), which
    field, and both values as Python literals, each cut to 160 characters ending in "..."."""
    assert StepDiff(node=3, field="status", expected="answered", got="gave_up").describe() == (
        "node 3, status: expected 'answered', got 'gave_up'"
    )
    assert StepDiff(node=None, field="episode", expected="run").describe() == (
        "episode, episode: expected 'run', got None"
    )
    fits, too_long = "x" * 158, "y" * 159  # 160 and 161 characters with their quotes
    text = StepDiff(node=0, field="f", expected=fits, got=too_long).describe()
    assert text == f"node 0, f: expected {fits!r}, got {repr(too_long)[:157]}..."


def test_an_episode_that_could_not_be_replayed_is_divergent_at_the_episode_level() -> None:
    t = recorded().model_copy(update={"trial": 2})
    verdict = EpisodeVerdict.not_replayed(t, "task", "t")
    assert (verdict.scenario_id, verdict.trial, verdict.ok) == ("t", 2, False)
    assert verdict.first_diff == StepDiff(node=None, field="task", expected="t", got=None)


class _Tools:
    """A tool env answering ``search`` from a dict of query -> observation, recording calls;
    ``dispatch`` as an env declares it."""

    def __init__(self, answers: dict[str, Observation], dispatch: str = "exact") -> None:
        self.answers = answers
        self.dispatch = dispatch
        self.calls: list[tuple[str, dict[str, Any]]] = []

    @property
    def functions(self) -> list[dict[str, Any]]:
        return [{"type": "function", "function": {"name": "api_search", "parameters": {}}}]

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        self.calls.append((name, args))
        return self.answers[args["q"]]


def _sent(q: str, content: str, *, ok: bool = True, provenance: str = "recording") -> StepCall:
    observation = Observation(ok=ok, content=content, provenance=provenance)
    return StepCall(
        id=q, name="search", arguments=json.dumps({"q": q}), args={"q": q}, observation=observation
    )


async def test_a_call_level_replay_counts_matched_and_exact_calls_and_names_the_first_miss() -> (
    None
):
    """Each sent call is re-issued, in node order, under the env's dispatch rule: a call whose
    answer has the same content counts as matched (exact only when the text is identical), the
    first one whose answer differs is the episode's difference; calls the agent never sent
    (invalid, unknown, no arguments) are not re-issued."""
    same, spaced = _answer("a"), json.dumps({"error": "", "response": "a"}, indent=1)
    nodes = [
        Node(
            id=1,
            parent=0,
            depth=2,
            kind="action",
            calls=[_sent("c", _answer("c")), _sent("d", _answer("d")), _sent("e", _answer("e"))],
        ),
        Node(
            id=0,
            parent=None,
            depth=1,
            kind="action",
            calls=[
                _sent("x", "never sent", provenance="invalid"),
                _sent("a", same),
                _sent("y", "never sent", provenance="unknown"),
                _sent("b", spaced),
            ],
        ),
    ]
    nodes[1].calls.append(StepCall(id="z", name="search", arguments="{", args=None))
    t = recorded().model_copy(update={"nodes": nodes, "trial": 1})
    tools = _Tools(
        {
            "a": Observation(ok=True, content=same),
            "b": Observation(ok=True, content=same),  # same content, other text
            "c": Observation(ok=True, content=_answer("changed")),
            "d": Observation(ok=False, content=_answer("d")),
            "e": Observation(ok=True, content=_answer("e")),
        },
        dispatch="toolbench_suffix",
    )
    verdict = await _replay_episode_calls(tools, t)  # type: ignore[arg-type]
    assert tools.calls == [("api_search", {"q": q}) for q in "abcde"]
    assert (verdict.scenario_id, verdict.trial) == ("t", 1)
    # exact: a, d (same text, another outcome) and e; matched: a, b and e
    assert (verdict.calls_checked, verdict.calls_matched, verdict.calls_exact) == (5, 3, 3)
    assert verdict.first_diff == StepDiff(
        node=1, field="calls[0].observation (search)", expected=_answer("c"), got=_answer("changed")
    )


def test_a_node_that_differs_reports_the_recorded_and_the_replayed_value() -> None:
    """The first differing field of a node is shown with the recorded value as expected and the
    re-run's as got (here a call's arguments), and the verdict keeps the episode's trial."""
    t = recorded().model_copy(update={"trial": 3})
    again = recorded().model_copy(update={"trial": 3})
    again.nodes[2].calls[0].arguments = '{"q": "b"}'
    verdict = compare_trajectories(t, again)
    assert (verdict.scenario_id, verdict.trial) == ("t", 3)
    assert verdict.first_diff == StepDiff(
        node=2, field="calls[0].arguments", expected='{"q": "a"}', got='{"q": "b"}'
    )


def test_observations_are_the_same_when_equal_text_or_both_absent_and_differ_otherwise() -> None:
    """Plain (non-JSON) text equal on both sides is reproduced; a call observed on one side only
    is a difference; a call observed on neither side is not."""
    plain, again = recorded(), recorded()
    for t in (plain, again):
        t.nodes[0].calls[0].observation = Observation(ok=True, content="plain text, not JSON")
    assert compare_trajectories(plain, again).ok
    unobserved = recorded()
    unobserved.nodes[0].calls[0].observation = None
    verdict = compare_trajectories(recorded(), unobserved)
    assert verdict.first_diff is not None and verdict.first_diff.field == "calls[0].ok"
    both = recorded()
    both.nodes[0].calls[0].observation = None
    assert compare_trajectories(both, unobserved).ok
