"""ReAct@N: independent chains under one budget, stopping at the first answer."""

from __future__ import annotations

import pytest
from scripted import FakeToolEnv, ScriptedModel, call, finish, give_up

from agents.agent import Agent, EpisodeMeta
from agents.budget import Budget
from agents.model import Turn
from agents.react_at_n import ReActAtN
from agents.trajectory import Status, Trajectory

META = EpisodeMeta(scenario_id="t", seed=1)


async def run(model: ScriptedModel, n: int = 4, **budget: int) -> Trajectory:
    return await ReActAtN(n=n).run(
        model=model,
        env=FakeToolEnv({"search": "found"}),
        query="q",
        budget=Budget(**budget),
        episode=META,
    )


def test_protocol_and_params() -> None:
    agent = ReActAtN(n=3)
    assert isinstance(agent, Agent) and agent.name == "react@n" and agent.params["n"] == 3
    with pytest.raises(ValueError):
        ReActAtN(n=0)


async def test_stops_at_the_first_answer() -> None:
    model = ScriptedModel(
        [call("search"), give_up(), call("search"), finish("second chain"), call("search")]
    )
    t = await run(model)
    assert t.status is Status.answered and t.final_answer == "second chain"
    assert [(n.id, n.parent) for n in t.nodes] == [(0, None), (1, 0), (2, None), (3, 2)]
    assert t.chosen_path == [2, 3] and len(model.requests) == 4
    assert t.tree["chains"] == 2 and t.tree["chain_ends"] == ["gave_up", "answered"]
    assert t.tree["nodes"] == 4  # the statistics count the nodes of every chain
    # chains are independent: the second starts from the same prompt, no diversity prompt
    assert model.messages[2] == model.messages[0]
    assert all(n.diversity_prompt is None for n in t.nodes)


async def test_all_chains_spent_without_an_answer() -> None:
    replies: list[Turn | Exception] = [call("search"), give_up("stuck")] * 3
    t = await run(ScriptedModel(replies), n=3)
    assert t.status is Status.gave_up and t.end_reason == "chains_exhausted"
    assert len(t.children(None)) == 3 and t.chosen_path == [0, 1]
    assert t.final_answer == "stuck"


async def test_depth_limit_starts_the_next_chain() -> None:
    replies: list[Turn | Exception] = [call("search"), call("search"), call("search"), finish("ok")]
    t = await run(ScriptedModel(replies), max_depth=2)
    assert [n.parent for n in t.nodes] == [None, 0, None, 2]
    assert t.status is Status.answered and t.tree["chain_ends"] == ["depth_limit", "answered"]


async def test_shared_budget_ends_all_chains() -> None:
    replies: list[Turn | Exception] = [call("search"), give_up()] * 4
    t = await run(ScriptedModel(replies), max_model_calls=3)
    assert t.status is Status.budget_exhausted and t.end_reason == "budget:max_model_calls"
    assert len(t.nodes) == 3 and t.tree["chains"] == 2 and t.tree["end"] == "budget"
