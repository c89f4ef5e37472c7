"""The shared step: turn interpretation, tool execution, truncation, infra errors."""

from __future__ import annotations

import json

from scripted import FakeToolEnv, ScriptedModel, call, finish

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.errors import CONTEXT_LENGTH, REPLY_TOO_LARGE, ModelError, ToolEnvError
from agents.model import ToolCall, Turn, Usage
from agents.step import Episode, interpret_turn, truncate_observation
from agents.toolenv import FINISH, GIVE_ANSWER, Observation
from agents.trajectory import Component, Status, messages_for

NAMES = ["search", "lookup", FINISH]


def make_episode(model: ScriptedModel, env: FakeToolEnv, **kw: object) -> Episode:
    return Episode(
        agent=Component(name="test"),
        model=model,
        env=env,
        query="find it",
        budget=Budget(**kw),  # type: ignore[arg-type]
        meta=EpisodeMeta(scenario_id="s1", seed=7),
        system_prompt="system",
        max_observation_chars=20,
    )


def turn(*calls: tuple[str, str], content: str | None = None) -> Turn:
    return Turn(
        content=content,
        tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)],
    )


def test_plain_action() -> None:
    plan = interpret_turn(turn(("search", '{"q": "x"}')), NAMES)
    assert plan.kind == "action"
    assert plan.calls[0].args == {"q": "x"} and plan.calls[0].observation is None


def test_text_without_a_call_is_a_thought_and_an_empty_turn_is_invalid() -> None:
    thought = interpret_turn(Turn(content="hmm"), NAMES)
    assert thought.kind == "thought" and thought.format_error is None
    for empty in (Turn(), Turn(content="  ")):
        assert interpret_turn(empty, NAMES).kind == "invalid"


def test_format_error_is_invalid() -> None:
    plan = interpret_turn(Turn(content="Action: ???", format_error="no Action line"), NAMES)
    assert plan.kind == "invalid" and plan.format_error == "no Action line"


def test_only_unknown_functions_is_invalid() -> None:
    plan = interpret_turn(turn(("nope", "{}")), NAMES)
    assert plan.kind == "invalid"
    assert "unknown function 'nope'" in (plan.format_error or "")


def test_unknown_next_to_known_gets_an_error_observation() -> None:
    plan = interpret_turn(turn(("nope", "{}"), ("search", "{}")), NAMES)
    assert plan.kind == "action"
    bad, good = plan.calls
    assert bad.observation is not None and bad.observation.provenance == "invalid"
    assert not bad.observation.ok
    # ToolBench's exact wording, so imported ToolBench trees replay identically
    assert bad.observation.content == '{"error": "No such function name: nope", "response": ""}'
    assert good.observation is None


def test_bad_json_is_an_error_observation() -> None:
    plan = interpret_turn(turn(("search", "{q: 1")), NAMES)
    assert plan.kind == "action"
    obs = plan.calls[0].observation
    assert obs is not None and obs.provenance == "invalid" and "not valid JSON" in obs.error


def test_finish_kinds_and_invalid_finish() -> None:
    answer = interpret_turn(
        turn((FINISH, '{"return_type": "give_answer", "final_answer": "42"}')), NAMES
    )
    assert answer.kind == "finish" and answer.finish and answer.finish.final_answer == "42"
    up = interpret_turn(turn((FINISH, '{"return_type": "give_up_and_restart"}')), NAMES)
    assert up.kind == "give_up"
    for bad in ('{"return_type": "maybe"}', '{"return_type": "give_answer"}', "[1]"):
        plan = interpret_turn(turn((FINISH, bad)), NAMES)
        assert plan.kind == "invalid", bad
        assert "Finish" in (plan.format_error or "")


async def test_tool_calls_run_before_finish() -> None:
    env = FakeToolEnv({"search": "found"})
    both = turn(
        ("search", '{"q": 1}'),
        (FINISH, json.dumps({"return_type": GIVE_ANSWER, "final_answer": "a"})),
    )
    ep = make_episode(ScriptedModel([both]), env)
    result = await ep.step(None)
    node = result.node
    assert result.stop is None and node is not None
    assert node.kind == "finish" and env.calls == [("search", {"q": 1})]
    assert node.calls[0].observation is not None and node.calls[0].observation.ok


async def test_action_records_observation_usage_and_request() -> None:
    env = FakeToolEnv({"search": "found"})
    model = ScriptedModel([call("search", q="x"), call("search", q="y")])
    ep = make_episode(model, env)
    first = (await ep.step(None)).node
    second = (await ep.step(first.id)).node  # type: ignore[union-attr]
    assert second is not None and second.parent == 0 and second.depth == 2
    assert env.calls == [("search", {"q": "x"}), ("search", {"q": "y"})]
    usage = ep.trajectory.usage
    assert (usage.model_calls, usage.tool_calls, usage.prompt_tokens) == (2, 2, 20)
    # each request is exactly the rebuilt conversation of the parent path
    t = ep.trajectory
    assert model.messages[0] == messages_for(t.prompt, [])
    assert model.messages[1] == messages_for(t.prompt, t.path_to(0))
    assert model.messages[1][-1]["role"] == "tool"
    assert [f["function"]["name"] for f in model.requests[0][1]] == ["search", FINISH]


async def test_invalid_turn_gets_feedback_and_no_tool_call() -> None:
    env = FakeToolEnv({"search": "found"})
    model = ScriptedModel(
        [Turn(content="Action: ?", format_error="no Action line"), call("search")]
    )
    ep = make_episode(model, env)
    node = (await ep.step(None)).node
    assert node is not None and node.kind == "invalid" and env.calls == []
    assert node.feedback and "no Action line" in node.feedback
    await ep.step(node.id)
    assert model.messages[1][-1] == {"role": "user", "content": node.feedback}
    (record,) = ep.trajectory.errors
    assert (record.kind, record.message, record.node) == ("agent", "no Action line", node.id)


async def test_observation_truncation_is_recorded() -> None:
    env = FakeToolEnv({"search": Observation(ok=True, content="x" * 50)})
    ep = make_episode(ScriptedModel([call("search")]), env)
    node = (await ep.step(None)).node
    obs = node.calls[0].observation  # type: ignore[union-attr]
    assert obs is not None and obs.truncated and obs.original_length == 50
    assert obs.content == "x" * 20 + "..."  # ToolBench's cut: the first N characters + "..."
    untouched = Observation(ok=True, content="short")
    assert truncate_observation(untouched, 20) is untouched


async def test_model_error_is_an_infra_error_node() -> None:
    model = ScriptedModel([ModelError("503 after 3 tries", kind="server", attempts=3)])
    ep = make_episode(model, FakeToolEnv({"search": "x"}))
    result = await ep.step(None)
    assert result.stop is not None and result.stop.status is Status.error
    assert result.stop.reason == "model_error:server"
    assert result.node is not None and result.node.kind == "error"
    assert ep.trajectory.errors[0].kind == "infra" and ep.trajectory.errors[0].node == 0


async def test_a_failed_model_call_records_what_failed_and_its_retries_on_its_node() -> None:
    """The error node says the failure's kind and message, the error record points at it, and
    the retries the client made are counted (three attempts: two retries)."""
    failure = ModelError("503 after 3 tries", kind="server", attempts=3)
    ep = make_episode(ScriptedModel([failure]), FakeToolEnv({"search": "x"}))
    result = await ep.step(None)
    assert result.node is not None and result.node.error == "server: 503 after 3 tries"
    (record,) = ep.trajectory.errors
    assert (record.kind, record.message, record.node) == ("infra", "503 after 3 tries", 0)
    assert ep.accountant.usage.model_retries == 2 and ep.accountant.usage.model_calls == 1


async def test_a_reply_over_the_cap_is_the_models_outcome_not_an_infra_error() -> None:
    """A reply over ``model.max_reply_bytes`` is what the model sent: an agent error record on
    its node, so the episode counts unsolved and is not run again."""
    failure = ModelError("the model's reply was over the limit", kind=REPLY_TOO_LARGE)
    ep = make_episode(ScriptedModel([failure]), FakeToolEnv({"search": "x"}))
    result = await ep.step(None)
    assert result.stop is not None and result.stop.status is Status.error
    assert result.stop.reason == "model_error:reply_too_large"
    (record,) = ep.trajectory.errors
    assert (record.kind, record.message, record.node) == (
        "agent",
        "the model's reply was over the limit",
        0,
    )


async def test_a_context_overflow_ends_on_its_error_node() -> None:
    failure = ModelError("the prompt is 9000 tokens, over 8192", kind=CONTEXT_LENGTH)
    ep = make_episode(ScriptedModel([call("search"), failure]), FakeToolEnv({"search": "x"}))
    first = (await ep.step(None)).node
    assert first is not None
    result = await ep.step(first.id)
    assert result.stop is not None and result.stop.status is Status.context_overflow
    assert result.node is not None and result.node.kind == "error" and result.node.id == 1
    (record,) = ep.trajectory.errors
    assert (record.kind, record.message, record.node) == (
        "agent",
        "the prompt is 9000 tokens, over 8192",
        1,
    )


async def test_a_tool_call_that_gets_no_answer_is_an_infra_error_of_its_node() -> None:
    def gone(args: dict[str, object]) -> Observation:
        raise ToolEnvError("the tool server closed the connection", kind="connection")

    ep = make_episode(ScriptedModel([call("search")]), FakeToolEnv({"search": gone}))
    result = await ep.step(None)
    assert result.stop is not None and result.stop.status is Status.error
    assert result.stop.reason == "tool_error:connection"
    node = result.node
    assert node is not None and node.error == (
        "call call_search got no answer: connection: the tool server closed the connection"
    )
    (record,) = ep.trajectory.errors
    assert (record.kind, record.message, record.node) == (
        "infra",
        "the tool server closed the connection",
        node.id,
    )
    assert ep.accountant.usage.tool_calls == 1


async def test_a_tool_answer_that_failed_in_the_infrastructure_is_an_infra_error_of_its_node():
    down = Observation(ok=False, content="", infra=True, error="simulator down", provenance="miss")
    ep = make_episode(ScriptedModel([call("search")]), FakeToolEnv({"search": down}))
    result = await ep.step(None)
    assert result.stop is not None and result.stop.reason == "tool_infra:miss"
    message = "tool call search failed in the infrastructure: simulator down"
    assert result.node is not None and result.node.error == message
    (record,) = ep.trajectory.errors
    assert (record.kind, record.message, record.node) == ("infra", message, result.node.id)


async def test_tool_budget_interrupts_a_turn_and_keeps_the_node() -> None:
    two = turn(("search", "{}"), ("lookup", "{}"))
    env = FakeToolEnv({"search": "a", "lookup": "b"})
    ep = make_episode(ScriptedModel([two]), env, max_tool_calls=1)
    result = await ep.step(None)
    assert result.stop is not None and result.stop.reason == "budget:max_tool_calls"
    node = result.node
    assert (
        node is not None
        and node.calls[1].observation is None
        and "interrupted" in (node.error or "")
    )
    assert env.calls == [("search", {})]


async def test_model_budget_blocks_before_the_call() -> None:
    model = ScriptedModel([call("search")])
    ep = make_episode(model, FakeToolEnv({"search": "a"}), max_model_calls=1)
    await ep.step(None)
    result = await ep.step(0)
    assert result.node is None and result.stop is not None
    assert result.stop.reason == "budget:max_model_calls" and len(model.requests) == 1


def test_finish_helper_shape() -> None:
    t = finish("x")
    assert t.tool_calls[0].name == FINISH and t.usage == Usage(
        prompt_tokens=10, completion_tokens=5, cost=0.001
    )
