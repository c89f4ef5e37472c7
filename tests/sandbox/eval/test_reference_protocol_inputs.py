"""What each reference step protocol hands its benchmark's code: the inputs made from an episode,
compared whole, and the measures (value and units) that come back.

docs/evaluation.md ("How an episode becomes each benchmark's inputs") defines the inputs: T-Eval's
JSON-format reply text, ToolEyes' ReAct conversation and tool document. Expected values are
worked by hand from the benchmarks' rules (T-Eval's ``permutation_match``, ToolEyes'
``Format_alignment_score``) as docs/evaluation.md states them, never read off our output.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from _step_builders import APIS, REF_STEPS, call, chain, make_task

from agents.toolenv import FINISH_FUNCTION
from agents.trajectory import Component, Node, Status, Trajectory
from sandbox.eval.steps import STEP_METRICS
from sandbox.eval.steps.episode import ScoringContext, StepEpisode
from sandbox.eval.steps.measure import Measure
from sandbox.eval.steps.metric import ScoredMetric
from sandbox.eval.steps.replies import Reply, WrittenCall
from sandbox.eval.steps.teval_metrics import PlanSettings, teval_plan, teval_reply
from sandbox.eval.steps.tooleyes_metrics import conversation, tool_document
from tests.sandbox.eval.benchmarks.token_cosine import TokenCosine

GEOCODE_FN: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "geocode_for_maps",
        "description": "Find a place.",
        "parameters": {
            "type": "object",
            "properties": {"address": {"type": "string"}},
            "required": ["address"],
        },
    },
}
FORECAST_FN: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "get_forecast_for_weatherly",
        "description": "Days ahead.",
        "parameters": {"type": "object", "properties": {"days": {"type": "integer"}}},
    },
}
PING_FN: dict[str, Any] = {"type": "function", "function": {"name": "ping_for_net"}}
FAILED_ENDING = (
    'Action: finish\nAction Input: {"answer": "I cannot handle the task."}'  # ToolEyes' answer
)


def episode(traj: Trajectory) -> StepEpisode:
    return StepEpisode(traj, make_task(), ScoringContext(APIS, TokenCosine()))


def measures(traj: Trajectory, metric: str) -> dict[str, Measure]:
    scored = ScoredMetric(STEP_METRICS.get(metric), STEP_METRICS.get(metric).options())
    return scored.measure(episode(traj))


def values(got: dict[str, Measure]) -> dict[str, float | None]:
    return {k: m.value for k, m in got.items()}


def units(got: dict[str, Measure]) -> dict[str, int]:
    return {k: m.n for k, m in got.items()}


def path(*nodes: Node, status: Status = Status.error) -> Trajectory:
    return Trajectory(
        scenario_id="t1",
        agent=Component(name="react"),
        model=Component(name="test"),
        status=status,
        nodes=list(nodes),
        chosen_path=[n.id for n in nodes],
        functions=[FINISH_FUNCTION, GEOCODE_FN, FORECAST_FN, PING_FN],
    )


def interrupted() -> Trajectory:
    """A call, a turn without a call that got feedback, then a model call that failed."""
    geocode = call("maps", "geocode", {"address": "Paris"})
    return path(
        Node(id=0, depth=1, kind="action", content="Find Paris.", calls=[geocode]),
        Node(id=1, parent=0, depth=2, kind="invalid", content="Hmm.", feedback="Call a tool."),
        Node(id=2, parent=1, depth=3, kind="error", error="endpoint down"),
    )


def test_tooleyes_conversation_of_an_episode_whose_model_call_failed() -> None:
    """Each turn as ReAct text, observations as function messages, feedback as a user message,
    and ToolEyes' execution-error ending in place of the failed model call."""
    observation = json.dumps({"error": "", "response": "x"})
    assert conversation(episode(interrupted())) == [
        {"from": "system", "value": "(tool document)"},
        {"from": "user", "value": "What is the weather in Paris?"},
        {
            "from": "assistant",
            "value": 'Thought: Find Paris.\nAction: geocode_for_maps\nAction Input: {"address": '
            '"Paris"}',
        },
        {"from": "function", "value": observation},
        {"from": "assistant", "value": "Thought: Hmm."},
        {"from": "user", "value": "Call a tool."},
        {
            "from": "assistant",
            "value": "Thought: During execution, an error occurs.\n" + FAILED_ENDING,
        },
    ]


def test_tooleyes_scores_of_an_episode_whose_model_call_failed() -> None:
    """Three replies: the call is right in both ReAct and input (1), the bare thought in
    neither (0), the forced ending is final and fails (0, answer_pass 0); no neat error. Tool
    reality looks at the one non-final well-formed reply: a documented tool, no bad parameter."""
    assert measures(interrupted(), "tooleyes-format") == {
        "format_alignment": Measure(value=1 / 3, n=3),
        "answer_pass": Measure(value=0.0, n=1),
        "neat_json_err": Measure(value=0.0, n=3),
        "neat_react_err": Measure(value=0.0, n=3),
    }
    assert measures(interrupted(), "tooleyes-selection") == {
        "tool_reality": Measure(value=1.0, n=1)
    }


def test_a_single_well_formed_answer_is_scored_by_tooleyes() -> None:
    """One reply (the Finish turn) is a conversation ToolEyes scores: right format, answered."""
    only_finish = chain([])
    assert measures(only_finish, "tooleyes-format") == {
        "format_alignment": Measure(value=1.0, n=1),
        "answer_pass": Measure(value=1.0, n=1),
        "neat_json_err": Measure(value=0.0, n=1),
        "neat_react_err": Measure(value=0.0, n=1),
    }


def test_an_episode_without_turns_is_no_tooleyes_conversation() -> None:
    """No assistant reply: ToolEyes has nothing to score (not applicable, not a zero)."""
    empty = path()
    assert conversation(episode(empty)) == [
        {"from": "system", "value": "(tool document)"},
        {"from": "user", "value": "What is the weather in Paris?"},
    ]
    assert {m.value for m in measures(empty, "tooleyes-format").values()} == {None}
    assert measures(empty, "tooleyes-selection") == {"tool_reality": Measure()}


def test_tooleyes_tool_document_is_the_offered_functions_without_finish() -> None:
    """Finish (wherever it stands) is left out; a function without a description gets "", one
    without ``required`` or ``properties`` (or without parameters at all) gets them empty."""
    assert tool_document(episode(interrupted())) == [
        GEOCODE_FN["function"],  # complete: as offered
        {
            "name": "get_forecast_for_weatherly",
            "description": "Days ahead.",
            "parameters": {
                "type": "object",
                "properties": {"days": {"type": "integer"}},
                "required": [],
            },
        },
        {
            "name": "ping_for_net",
            "description": "",
            "parameters": {"properties": {}, "required": []},
        },
    ]


def node_of(text: str) -> Node:
    return Node(id=0, kind="action", content=text)


def test_teval_reply_text_is_the_json_reply_a_model_would_write() -> None:
    """No turn: the empty reply; a turn without a call: its text; a call: thought, name and the
    argument text as written (stripped; empty is ``{}``), non-ASCII characters kept as written."""
    assert teval_reply(None) == ""
    assert teval_reply(Reply("Just text.", None, node_of("Just text."))) == "Just text."
    weather = WrittenCall("météo_for_wetter", ' {"city": "Zürich"}\n')
    assert teval_reply(Reply("Météo à Zürich", weather, node_of(""))) == (
        '{"thought": "Météo à Zürich", "name": "météo_for_wetter", "args": {"city": "Zürich"}}'
    )
    bare = WrittenCall("ping_for_net", "  ")
    assert teval_reply(Reply('Say "hi"', bare, node_of(""))) == (
        '{"thought": "Say \\"hi\\"", "name": "ping_for_net", "args": {}}'
    )


def one_call() -> Trajectory:
    first = REF_STEPS[0]
    return chain([(first.thought, [call(first.tool, first.api, first.args)])])


def test_teval_plan_by_permutation_scores_dependency_maps() -> None:
    """``strategy=permutation``: both plans get a FinishAction appended (1 call -> 2 steps, 3
    reference steps -> 4), each step depends only on itself, so the best map keeps 2
    dependencies: recall 2/4, precision 2/2, F1 2/3. Units: calls, reference steps, 1, 1."""
    got = teval_plan(episode(one_call()), PlanSettings(strategy="permutation"))
    assert values(got) == pytest.approx(
        {"plan_precision": 1.0, "plan_recall": 0.5, "plan_f1": 2 / 3, "plan_parse_rate": 1.0}
    )
    assert units(got) == {"plan_precision": 1, "plan_recall": 3, "plan_f1": 1, "plan_parse_rate": 1}


def test_teval_plan_by_bertscore_is_the_default() -> None:
    """The default strategy: the one call matches the first reference step (same name, same
    argument text: similarity 1 > 0.8): precision 1, recall 1/3, F1 1/2."""
    got = measures(one_call(), "teval-plan")
    assert values(got) == pytest.approx(
        {"plan_f1": 0.5, "plan_precision": 1.0, "plan_recall": 1 / 3, "plan_parse_rate": 1.0}
    )
    assert units(got) == {"plan_f1": 1, "plan_precision": 1, "plan_recall": 3, "plan_parse_rate": 1}


def test_teval_plan_without_calls_is_no_permutation_sample() -> None:
    """T-Eval's permutation strategy raises on an empty plan: not applicable; bertscore's
    empty plan scores 0 and is unparsed."""
    nothing = chain([])
    assert teval_plan(episode(nothing), PlanSettings(strategy="permutation")) == {}
    assert teval_plan(episode(nothing), PlanSettings()) == {
        "plan_precision": Measure(value=0.0, n=0),
        "plan_recall": Measure(value=0.0, n=3),
        "plan_f1": Measure(value=0.0, n=1),
        "plan_parse_rate": Measure(value=0.0, n=1),
    }


def test_ultratool_selection_counts_an_episode_once_and_a_step_per_reference_step() -> None:
    """One call for three reference steps: records labelled 2 and 3 are missing (UltraTool's
    ``no_good``), so global 0 over 1 episode, local 1/3 over 3 steps."""
    got = measures(one_call(), "ultratool-selection")
    assert values(got) == pytest.approx(
        {"tool_selection_global": 0.0, "tool_selection_local": 1 / 3}
    )
    assert units(got) == {"tool_selection_global": 1, "tool_selection_local": 3}
