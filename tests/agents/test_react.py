"""ReAct: every way an episode can end, every budget field, and exact requests."""

from __future__ import annotations

import pytest
from scripted import FakeToolEnv, ScriptedModel, call, finish, give_up

from agents.agent import Agent, EpisodeMeta
from agents.budget import Budget
from agents.errors import ModelError
from agents.model import Turn, Usage
from agents.react import ReActAgent
from agents.trajectory import Status, Trajectory, messages_for

META = EpisodeMeta(scenario_id="task-1", run_id="r1", trial=2, seed=3)


async def run(model: ScriptedModel, env: FakeToolEnv | None = None, **budget: object) -> Trajectory:
    env = env or FakeToolEnv({"search": "found", "lookup": "details"})
    return await ReActAgent().run(
        model=model,
        env=env,
        query="what is it?",
        budget=Budget(**budget),  # type: ignore[arg-type]
        episode=META,
    )


def test_satisfies_the_agent_protocol() -> None:
    agent = ReActAgent(max_observation_chars=100)
    assert isinstance(agent, Agent) and agent.name == "react"
    assert agent.params["max_observation_chars"] == 100


async def test_answered() -> None:
    model = ScriptedModel([call("search", q="a"), call("lookup", id=1), finish("42")])
    t = await run(model)
    assert t.status is Status.answered and t.end_reason == "answered" and t.final_answer == "42"
    assert [n.kind for n in t.nodes] == ["action", "action", "finish"]
    assert [n.parent for n in t.nodes] == [None, 0, 1]
    assert t.chosen_path == [0, 1, 2]
    assert (t.usage.model_calls, t.usage.tool_calls) == (3, 2)
    assert t.usage.prompt_tokens == 30 and t.usage.cost == pytest.approx(0.003)
    assert (t.scenario_id, t.run_id, t.trial, t.seed) == ("task-1", "r1", 2, 3)
    assert t.agent.name == "react" and t.model.name == "scripted"
    assert t.prompt[1] == {"role": "user", "content": "what is it?"}
    assert t.functions[-1]["function"]["name"] == "Finish"
    # every request equals the conversation rebuilt from the trajectory
    for node, messages in zip(t.nodes, model.messages, strict=True):
        parent_path = t.path_to(node.parent) if node.parent is not None else []
        assert messages == messages_for(t.prompt, parent_path)
    # the record round-trips through JSON
    assert Trajectory.model_validate_json(t.to_json_line()) == t


async def test_gave_up_keeps_the_explanation() -> None:
    t = await run(ScriptedModel([call("search"), give_up("the API is down")]))
    assert t.status is Status.gave_up and t.end_reason == "gave_up"
    assert t.final_answer == "the API is down" and t.chosen_path == [0, 1]


async def test_thoughts_and_invalid_turns_do_not_end_the_episode() -> None:
    """A thought is a step of its own (not a mistake); an invented name is an agent mistake."""
    t = await run(ScriptedModel([Turn(content="thinking"), call("nope"), call("search"), finish()]))
    assert [n.kind for n in t.nodes] == ["thought", "invalid", "action", "finish"]
    assert t.status is Status.answered and t.usage.model_calls == 4
    assert [e.kind for e in t.errors] == ["agent"]


async def test_model_error_is_infra() -> None:
    model = ScriptedModel([call("search"), ModelError("timed out 3 times", kind="timeout")])
    t = await run(model)
    assert t.status is Status.error and t.end_reason == "model_error:timeout"
    assert t.infra_error and t.errors[0].kind == "infra"
    assert t.nodes[-1].kind == "error" and t.chosen_path == [0, 1]


def expensive(name: str) -> Turn:
    turn = call(name)
    turn.usage = Usage(prompt_tokens=600, completion_tokens=100, cost=0.5)
    return turn


@pytest.mark.parametrize(
    ("budget", "reason", "model_calls", "tool_calls"),
    [
        ({"max_model_calls": 2}, "budget:max_model_calls", 2, 2),
        ({"max_tool_calls": 1}, "budget:max_tool_calls", 2, 1),
        ({"max_tokens": 1000}, "budget:max_tokens", 2, 2),
        ({"max_cost": 0.9}, "budget:max_cost", 2, 2),
        ({"max_depth": 3}, "budget:max_depth", 3, 3),
    ],
)
async def test_each_budget_field_ends_cleanly(
    budget: dict[str, float], reason: str, model_calls: int, tool_calls: int
) -> None:
    model = ScriptedModel([expensive("search") for _ in range(5)] + [finish()])
    t = await run(model, **budget)
    assert t.status is Status.budget_exhausted and t.end_reason == reason
    assert (t.usage.model_calls, t.usage.tool_calls) == (model_calls, tool_calls)
    assert t.nodes and t.chosen_path == [n.id for n in t.nodes]


@pytest.mark.parametrize(
    ("budget", "reason"),
    [({"max_tokens": 30}, "budget:max_tokens"), ({"max_cost": 0.002}, "budget:max_cost")],
)
async def test_a_spend_limit_stops_at_exactly_its_value_and_not_one_call_before(
    budget: dict[str, float], reason: str
) -> None:
    """``--max-tokens N`` / ``--max-cost C``: a call is refused once the episode has spent N
    (the call that reaches it is the last), and allowed while it has spent less. Each turn here
    spends 15 tokens (10 + 5) and 0.001 USD, so two calls reach 30 tokens / 0.002 USD."""
    model = ScriptedModel([call("search") for _ in range(5)] + [finish()])
    t = await run(model, **budget)
    assert (t.status, t.end_reason, t.usage.model_calls) == (Status.budget_exhausted, reason, 2)
    ((field, limit),) = budget.items()
    above = await run(
        ScriptedModel([call("search") for _ in range(5)] + [finish()]), **{field: limit * 1.5}
    )
    assert (above.end_reason, above.usage.model_calls) == (reason, 3)


async def test_wall_seconds_budget() -> None:
    """The episode ends on its wall clock once the seconds are spent (the time recorded is at
    least the budget; how much more depends on the machine, so no upper bound is asserted)."""
    model = ScriptedModel(lambda messages: call("search"), delay=0.05)
    t = await run(model, max_seconds=0.12)
    assert t.status is Status.budget_exhausted and t.end_reason == "budget:max_seconds"
    assert t.usage.wall_seconds >= 0.12


async def test_observations_are_truncated_in_history() -> None:
    env = FakeToolEnv({"search": "y" * 5000})
    model = ScriptedModel([call("search"), finish()])
    t = await ReActAgent(max_observation_chars=100).run(
        model=model, env=env, query="q", budget=Budget(), episode=META
    )
    obs = t.nodes[0].calls[0].observation
    assert (
        obs is not None
        and obs.truncated
        and obs.original_length == 5000 + len('{"error": "", "response": ""}')
    )
    assert len(model.messages[1][-1]["content"]) == 100 + len("...")
    assert model.messages[1][-1]["content"].endswith("y...")
