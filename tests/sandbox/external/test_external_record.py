"""The trajectory of a black box: model turns and tool calls merged into one ReAct-shaped chain.

What it protects: a turn is interpreted as the built-in loops interpret one (its calls left
unanswered until the agent runs them); a call fills the turn's call with the same id, else the
latest turn's call with the same name and arguments (compared as JSON); a call no turn asked
for joins the latest turn (a thought that thus reached a tool becomes an action) or, before any
turn, a node of its own; the agent's Finish becomes the latest turn's finish unless that turn
asked for it itself; every request is kept as an exchange.
"""

from __future__ import annotations

from agents.agent import EpisodeMeta
from agents.model import ToolCall, Turn
from agents.models.exchange import ModelRequest, completion_of
from agents.toolenv import FINISH_FUNCTION, Observation
from agents.trajectory import Component, FinishCall, StepCall
from sandbox.external.record import EpisodeRecord

SEARCH = {
    "type": "function",
    "function": {"name": "search_for_shop", "parameters": {"type": "object"}},
}


def _record() -> EpisodeRecord:
    return EpisodeRecord(
        agent=Component(name="external"),
        model=Component(name="m"),
        meta=EpisodeMeta(scenario_id="t"),
        query="find kettles",
        functions=[SEARCH, FINISH_FUNCTION],
        dispatch="exact",
    )


def _turn(record: EpisodeRecord, turn: Turn) -> None:
    request = ModelRequest(messages=[{"role": "user", "content": f"turn {record.turns}"}])
    response = completion_of(turn, id="x", created=0, model="m")
    record.add_turn(turn, request, model="m", stream=False, response=response)


def _ran(record: EpisodeRecord, name: str, arguments: str, call_id: str | None) -> StepCall:
    plan, _ = record.interpret(name, arguments, call_id)
    (call,) = plan.calls
    call.observation = Observation(ok=True, content=f"answer to {arguments}")
    return call


def test_calls_fill_the_turn_that_asked_for_them_by_id_then_by_name_and_arguments() -> None:
    record = _record()
    asked = [
        ToolCall(id="a", name="search_for_shop", arguments='{"q": "kettle"}'),
        ToolCall(id="b", name="search_for_shop", arguments='{"q": "teapot"}'),
    ]
    _turn(record, Turn(content="searching", tool_calls=asked))
    (node,) = record.nodes
    assert node.kind == "action" and all(c.observation is None for c in node.calls)
    record.attach(_ran(record, "search_for_shop", '{"q": "teapot"}', "b"))
    record.attach(_ran(record, "search_for_shop", '{ "q" : "kettle" }', None))  # same JSON
    assert [c.observation.content for c in node.calls] == [
        'answer to { "q" : "kettle" }',
        'answer to {"q": "teapot"}',
    ]
    assert len(record.trajectory.exchanges) == 1


def test_a_call_no_turn_asked_for_joins_the_latest_turn() -> None:
    record = _record()
    first = record.attach(_ran(record, "search_for_shop", "{}", None))  # before any model turn
    assert (first.id, first.kind, len(first.calls)) == (0, "action", 1)
    _turn(record, Turn(content="let me think"))
    thought = record.nodes[1]
    assert thought.kind == "thought" and thought.parent == 0
    record.attach(_ran(record, "search_for_shop", '{"q": 1}', "x"))
    assert thought.kind == "action" and [c.id for c in thought.calls] == ["x"]
    record.attach(_ran(record, "search_for_shop", '{"q": 2}', "x"))  # an id used twice
    assert [c.id for c in thought.calls] == ["x", "x_1"]


def test_the_agents_finish_becomes_the_latest_turns_finish() -> None:
    record = _record()
    _turn(record, Turn(content="The answer is 4."))
    record.finish(FinishCall(return_type="give_answer", final_answer="4"))
    (node,) = record.nodes
    assert node.kind == "finish" and node.finish.final_answer == "4"
    finish = ToolCall(
        id="f", name="Finish", arguments='{"return_type": "give_answer", "final_answer": "5"}'
    )
    _turn(record, Turn(content="done", tool_calls=[finish]))
    asked = record.nodes[1]
    assert asked.kind == "finish"
    record.finish(FinishCall(return_type="give_answer", final_answer="5"))  # the one it asked for
    assert len(record.nodes) == 2 and asked.finish.final_answer == "5"


def test_an_unknown_function_is_answered_as_the_built_in_loops_answer_it() -> None:
    record = _record()
    plan, call_id = record.interpret("searh_for_shop", "{}", None)
    (call,) = plan.calls
    assert call.hallucinated and call_id == "sandbox_call_1"
    assert (
        call.observation.content
        == '{"error": "No such function name: searh_for_shop", "response": ""}'
    )
    plan, _ = record.interpret("Finish", '{"return_type": "give_up_and_restart"}', None)
    assert plan.finish is not None and plan.finish.return_type == "give_up_and_restart"
