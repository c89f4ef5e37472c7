"""The chain's override points and the end mapping, through ReAct, ReAct@N and DFSDT.

A strategy of one's own is a hooks class and a name: ``FirstHit`` ("stop after the first
successful call", the shape of docs/architecture.md's strategy recipe) answers with the first
successful observation's text, and the same hooks class mixed into ReAct@N or DFSDT stops those
at the first hit too.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from scripted import FakeToolEnv, ScriptedModel, call, finish, give_up

from agents import (
    Agent,
    Budget,
    ChainEnd,
    ChainHooks,
    DFSDTAgent,
    Episode,
    EpisodeEnd,
    EpisodeMeta,
    Node,
    Observation,
    ReActAgent,
    ReActAtN,
    Status,
    Trajectory,
    episode_end,
    fallback_end,
    successful_observations,
)
from agents.chain import run_chain
from agents.errors import ModelError
from agents.model import Turn
from agents.step import Stop
from agents.strategies import STRATEGIES, build_agent, strategy_entry
from agents.trajectory import Component

META = EpisodeMeta(scenario_id="t", seed=1)


class FirstHitHooks(ChainHooks):
    """A chain ends, answered, at the first call that reached the tools and succeeded."""

    def ends_chain(self, episode: Episode, node: Node, *, max_depth: int | None) -> ChainEnd | None:
        hits = successful_observations(node)
        if hits:
            return ChainEnd("answered", node, final_answer=hits[0].content)
        return super().ends_chain(episode, node, max_depth=max_depth)


class FirstHit(FirstHitHooks, ReActAgent):
    """ReAct that answers with the first successful observation's text."""

    name = "first-hit"


def tools() -> FakeToolEnv:
    return FakeToolEnv({"broken": Observation(ok=False, content="down"), "search": "found"})


def text(response: str) -> str:
    """The observation text ``FakeToolEnv`` answers a successful call with."""
    return json.dumps({"error": "", "response": response})


async def run(agent: Agent, model: ScriptedModel, **budget: Any) -> Trajectory:
    return await agent.run(
        model=model, env=tools(), query="q", budget=Budget(**budget), episode=META
    )


async def test_first_hit_answers_with_the_first_successful_observation() -> None:
    """An invented name and a failed call are no hit; the first success ends the episode."""
    model = ScriptedModel([call("nope"), call("broken"), call("search"), finish("never asked")])
    t = await run(FirstHit(), model)
    assert t.status is Status.answered and t.end_reason == "answered"
    assert t.final_answer == text("found") and t.chosen_path == [0, 1, 2]
    assert [n.kind for n in t.nodes] == ["invalid", "action", "action"]
    assert len(model.requests) == 3 and t.agent.name == "first-hit"


async def test_without_a_hit_first_hit_ends_as_react_does() -> None:
    t = await run(FirstHit(), ScriptedModel([call("broken"), give_up("no luck")]))
    assert t.status is Status.gave_up and t.final_answer == "no luck" and t.chosen_path == [0, 1]


@pytest.mark.parametrize("base", [ReActAtN, DFSDTAgent])
async def test_the_same_hooks_stop_react_at_n_and_dfsdt_at_the_first_hit(base: type) -> None:
    """ReAct@N's second chain and DFSDT's second child of the root both start at node 2."""
    agent = type("FirstHitSearch", (FirstHitHooks, base), {"name": "first-hit-search"})()
    model = ScriptedModel([call("broken"), give_up(), call("search"), finish("never asked")])
    t = await run(agent, model)
    assert [n.parent for n in t.nodes] == [None, 0, None]
    assert t.status is Status.answered and t.final_answer == text("found")
    assert t.chosen_path == [2] and t.tree["end"] == "answer_found"


class ToolLimit(ChainHooks):
    """Stops before the model call that follows the second tool call; notes each parent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.parents: list[int | None] = []

    def before_model_call(self, episode: Episode, parent: Node | None) -> Stop | None:
        self.parents.append(parent.id if parent is not None else None)
        if episode.trajectory.usage.tool_calls >= 2:
            return Stop(Status.budget_exhausted, "budget:own_tool_limit")
        return None


@pytest.mark.parametrize("base", [ReActAgent, ReActAtN, DFSDTAgent])
async def test_a_stop_before_the_model_call_ends_every_strategy(base: type) -> None:
    agent = type("Limited", (ToolLimit, base), {"name": "limited"})()
    model = ScriptedModel([call("search"), call("search"), finish("never asked")])
    t = await run(agent, model)
    assert agent.parents == [None, 0, 1] and len(model.requests) == 2
    assert t.status is Status.budget_exhausted and t.end_reason == "budget:own_tool_limit"
    assert t.chosen_path == [0, 1] and t.final_answer is None


class Watcher(ChainHooks):
    """Notes every node it is shown, with whether each of its calls has an observation."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[tuple[int, str, list[bool]]] = []

    def after_observation(self, episode: Episode, node: Node) -> None:
        self.seen.append((node.id, node.kind, [c.observation is not None for c in node.calls]))


@pytest.mark.parametrize("base", [ReActAgent, ReActAtN, DFSDTAgent])
async def test_after_observation_sees_every_node_once_with_its_observations(base: type) -> None:
    agent = type("Watched", (Watcher, base), {"name": "watched"})()
    model = ScriptedModel([Turn(content="hmm"), call("search"), ModelError("down", kind="http")])
    t = await run(agent, model)
    assert agent.seen == [(0, "thought", []), (1, "action", [True]), (2, "error", [])]
    assert t.status is Status.error and t.end_reason == "model_error:http"


class GiveUpOnFailure(ChainHooks):
    """A failed observation ends the chain as a give-up, explained."""

    def ends_chain(self, episode: Episode, node: Node, *, max_depth: int | None) -> ChainEnd | None:
        if any(c.observation is not None and not c.observation.ok for c in node.calls):
            return ChainEnd("gave_up", node, final_answer="the tool is down")
        return super().ends_chain(episode, node, max_depth=max_depth)


async def test_a_give_up_named_by_the_predicate_ends_react_with_its_explanation() -> None:
    agent = type("Quitter", (GiveUpOnFailure, ReActAgent), {"name": "quitter"})()
    t = await run(agent, ScriptedModel([call("search"), call("broken")]))
    assert t.status is Status.gave_up and t.end_reason == "gave_up"
    assert t.final_answer == "the tool is down" and t.chosen_path == [0, 1]


async def test_a_give_up_named_by_the_predicate_starts_react_at_n_s_next_chain() -> None:
    agent = type("Quitter", (GiveUpOnFailure, ReActAtN), {"name": "quitter"})(n=2)
    t = await run(agent, ScriptedModel([call("broken"), call("search"), finish("42")]))
    assert t.tree["chain_ends"] == ["gave_up", "answered"] and t.final_answer == "42"


def test_a_chain_end_has_a_stop_exactly_when_it_stopped() -> None:
    stop = Stop(Status.error, "x")
    with pytest.raises(ValueError, match="needs a stop"):
        ChainEnd("stopped", None)
    with pytest.raises(ValueError, match="needs a stop"):
        ChainEnd("model_error", None)
    with pytest.raises(ValueError, match="takes no stop"):
        ChainEnd("answered", None, stop)
    assert ChainEnd("stopped", None, stop).stop is stop


async def three_nodes() -> Trajectory:
    """A chain of three nodes: two calls (the second failed) and a give-up with a reason."""
    model = ScriptedModel([call("search"), call("broken"), give_up("why")])
    return await run(ReActAgent(), model)


@pytest.mark.parametrize(
    ("end", "expected"),
    [
        (ChainEnd("answered", None, final_answer="a"), (Status.answered, "answered", [], "a")),
        (ChainEnd("gave_up", None, final_answer="g"), (Status.gave_up, "gave_up", [], "g")),
        (ChainEnd("depth_limit", None), (Status.budget_exhausted, "budget:max_depth", [], None)),
        (
            ChainEnd("stopped", None, Stop(Status.budget_exhausted, "budget:max_tokens")),
            (Status.budget_exhausted, "budget:max_tokens", [], None),
        ),
        (
            ChainEnd("model_error", None, Stop(Status.error, "model_error:http")),
            (Status.error, "model_error:http", [], None),
        ),
    ],
)
async def test_episode_end_maps_each_chain_outcome(end: ChainEnd, expected: tuple) -> None:
    t = await three_nodes()
    status, reason, path, final = expected
    # the chosen path runs to the chain's last node; none without one
    assert episode_end(t, end) == EpisodeEnd(status, reason, path, final)
    at_node_1 = ChainEnd(end.outcome, t.nodes[1], end.stop, end.final_answer)
    assert episode_end(t, at_node_1) == EpisodeEnd(status, reason, [0, 1], final)


async def test_fallback_end_takes_the_rule_s_path_and_the_give_up_s_explanation() -> None:
    t = await three_nodes()
    assert fallback_end(t, Status.error, "boom") == EpisodeEnd(
        Status.error, "boom", [0, 1, 2], "why"
    )


@pytest.mark.parametrize(
    ("status", "tree_end"),
    [
        (Status.answered, "answer_found"),
        (Status.gave_up, "tree_exhausted"),
        (Status.budget_exhausted, "budget"),
        (Status.error, "error"),
    ],
)
def test_the_tree_end_of_each_status(status: Status, tree_end: str) -> None:
    assert EpisodeEnd(status, "r", []).tree_end == tree_end


async def test_run_chain_without_hooks_is_react_s_chain_and_close_records_the_end() -> None:
    model = ScriptedModel([call("search"), finish("42")])
    ep = Episode(
        agent=Component(name="own"),
        model=model,
        env=tools(),
        query="q",
        budget=Budget(),
        meta=META,
        system_prompt="s",
    )
    end = await run_chain(ep, max_depth=None)
    assert end.outcome == "answered" and end.last is ep.trajectory.nodes[1]
    t = ep.close(episode_end(ep.trajectory, end), tree={"own": 1})
    assert (t.status, t.end_reason, t.chosen_path, t.final_answer) == (
        Status.answered,
        "answered",
        [0, 1],
        "42",
    )
    assert t.tree == {"own": 1} and t.ended_at is not None


async def test_first_hit_registers_with_react_s_options() -> None:
    with STRATEGIES.registered("first-hit", strategy_entry(FirstHit)):
        agent = build_agent("first-hit", max_observation_chars=9)
    assert isinstance(agent, FirstHit) and agent.params["max_observation_chars"] == 9
    t = await run(agent, ScriptedModel([call("search")]))
    assert t.final_answer == text("found")[:9] + "..." and t.agent.name == "first-hit"
