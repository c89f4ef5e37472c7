"""ToolBench's rules in the agents' own loops, one by one, with a scripted model.

(1) dispatch by suffix, (2) depth cut and give-up backtracking, (5) invented names,
(6) Finish, (7) model-call failures and thoughts, (8) the observation cut; (3) and (4) live in
the mock tools (``tests/mock_tools/test_scoped_recordings.py``). The importer's side of each is
``tests/sandbox/interop/test_toolbench_semantics.py``.
"""

from __future__ import annotations

import json
from typing import Any

from scripted import FakeToolEnv, ScriptedModel, call, finish, give_up, last_tool_count

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.dfsdt import DFSDTAgent
from agents.errors import ModelError
from agents.model import Message, ToolCall, Turn
from agents.react import ReActAgent
from agents.react_at_n import ReActAtN
from agents.step import interpret_turn
from agents.toolenv import FINISH, HALLUCINATED_NAME, dispatch
from agents.trajectory import Status, Trajectory

META = EpisodeMeta(scenario_id="t")


class SuffixEnv(FakeToolEnv):
    """A fake env that declares ToolBench's dispatch rule."""

    dispatch = "toolbench_suffix"


def raw(name: str, arguments: str, content: str | None = None) -> Turn:
    return Turn(content=content, tool_calls=[ToolCall(id="c", name=name, arguments=arguments)])


def shape(t: Trajectory) -> list[tuple[int | None, str]]:
    return [(n.parent, n.kind) for n in t.nodes]


# -- 1. dispatch ---------------------------------------------------------------------------------


def test_dispatch_rules() -> None:
    names = ["ba_for_x", "a_for_x", "get_weather_for_w", FINISH]
    assert dispatch("a_for_x", names, "exact") == "a_for_x"
    assert dispatch("weather_for_w", names, "exact") is None
    # ToolBench: the first function, in the order offered, whose name ends with the name written
    assert dispatch("weather_for_w", names, "toolbench_suffix") == "get_weather_for_w"
    assert dispatch("a_for_x", names, "toolbench_suffix") == "ba_for_x"
    assert dispatch("nothing", names, "toolbench_suffix") is None
    # Finish is never a target (only "ends with" it would crash ToolBench's harness)
    assert dispatch("ish", names, "toolbench_suffix") is None
    assert dispatch(FINISH, names, "exact") is None


async def test_a_shortened_name_reaches_its_function_under_the_suffix_rule() -> None:
    model = ScriptedModel([call("weather"), finish()])
    env = SuffixEnv({"get_weather": "sunny"})
    t = await ReActAgent().run(model=model, env=env, query="q", budget=Budget(), episode=META)
    assert env.calls == [("get_weather", {})] and t.nodes[0].kind == "action"
    assert t.nodes[0].calls[0].function == "get_weather" and t.nodes[0].calls[0].name == "weather"
    exact = FakeToolEnv({"get_weather": "sunny"})
    t = await ReActAgent().run(
        model=ScriptedModel([call("weather"), finish()]),
        env=exact,
        query="q",
        budget=Budget(),
        episode=META,
    )
    assert exact.calls == [] and t.nodes[0].kind == "invalid"


# -- 2. backtracking -----------------------------------------------------------------------------


def _deep(messages: list[Message]) -> Turn:
    """Always one more call; a second child of any node answers."""
    last = messages[-1]
    if last["role"] == "user" and last["content"].startswith("You have been"):
        return finish(f"second child after {last_tool_count(messages)} calls")
    return call("search", q=str(last_tool_count(messages)))


async def test_depth_cut_climbs_one_level_by_default_and_two_when_set() -> None:
    async def run(**options: Any) -> Trajectory:
        return await DFSDTAgent(**options).run(
            model=ScriptedModel(_deep),
            env=FakeToolEnv({"search": "x"}),
            query="q",
            budget=Budget(max_depth=2),
            episode=META,
        )

    one = await run()  # ToolBench's published DFS: the cut node's parent tries another child
    assert shape(one) == [(None, "action"), (0, "action"), (0, "finish")]
    two = await run(depth_cut_backtrack=2)  # an earlier version: the grandparent does
    assert shape(two) == [(None, "action"), (0, "action"), (None, "finish")]


async def test_give_up_climbs_give_up_backtrack_levels() -> None:
    def script(messages: list[Message]) -> Turn:
        n = last_tool_count(messages)
        if messages[-1]["role"] == "user" and messages[-1]["content"].startswith("You have been"):
            return finish(f"retry at {n}")
        return call("search", q=str(n)) if n < 2 else give_up()

    async def run(give_up_backtrack: int) -> Trajectory:
        return await DFSDTAgent(give_up_backtrack=give_up_backtrack).run(
            model=ScriptedModel(script),
            env=FakeToolEnv({"search": "x"}),
            query="q",
            budget=Budget(),
            episode=META,
        )

    two = await run(2)  # the give-up's parent gives up too: its grandparent retries
    assert shape(two) == [(None, "action"), (0, "action"), (1, "give_up"), (0, "finish")]
    one = await run(1)  # a plain dead end: its parent retries
    assert shape(one) == [(None, "action"), (0, "action"), (1, "give_up"), (1, "finish")]


# -- 5. invented names ---------------------------------------------------------------------------


async def test_an_invented_name_gets_toolbenchs_observation_and_is_renamed_in_the_history() -> None:
    model = ScriptedModel([call("made_up", x=1), call("search"), finish()])
    env = FakeToolEnv({"search": "x"})
    t = await ReActAgent().run(model=model, env=env, query="q", budget=Budget(), episode=META)
    node = t.nodes[0]
    assert node.kind == "invalid" and node.feedback is None and env.calls == [("search", {})]
    text = json.dumps({"error": "No such function name: made_up", "response": ""})
    assert node.calls[0].observation is not None and node.calls[0].observation.content == text
    assistant, result = model.messages[1][-2:]
    assert assistant["tool_calls"][0]["function"] == {
        "name": HALLUCINATED_NAME,
        "arguments": '{"x": 1}',
    }
    assert result == {
        "role": "tool",
        "tool_call_id": "call_made_up",
        "name": HALLUCINATED_NAME,
        "content": text,
    }


# -- 6. Finish -----------------------------------------------------------------------------------


def test_an_unusable_finish_is_answered_with_toolbenchs_literal_error() -> None:
    plan = interpret_turn(raw(FINISH, '{"return_type": "give_answer"}'), [FINISH])
    assert plan.kind == "invalid" and plan.finish is None
    assert plan.calls[0].observation is not None
    assert plan.calls[0].observation.content == '{error:"must have "final_answer""}'
    lenient = raw(FINISH, '{"return_type": "give_answer", "final_answer": "say "hi""}')
    plan = interpret_turn(lenient, [FINISH])
    assert plan.kind == "finish" and plan.finish is not None
    assert plan.finish.final_answer == 'say "hi"'


async def test_the_search_goes_on_below_an_unusable_finish() -> None:
    model = ScriptedModel([raw(FINISH, "{}"), finish("now")])
    t = await DFSDTAgent().run(
        model=model, env=FakeToolEnv({"s": "x"}), query="q", budget=Budget(), episode=META
    )
    assert shape(t) == [(None, "invalid"), (0, "finish")]
    assert model.messages[1][-1]["content"] == '{error:"must have "return_type""}'


# -- 7. model-call failures and thoughts ---------------------------------------------------------


async def test_a_failed_model_call_prunes_its_branch_when_asked() -> None:
    def script() -> list[Turn | Exception]:
        return [ModelError("timed out", kind="timeout"), call("search"), finish()]

    stop = await DFSDTAgent().run(
        model=ScriptedModel(script()),
        env=FakeToolEnv({"search": "x"}),
        query="q",
        budget=Budget(),
        episode=META,
    )
    assert stop.status is Status.error and len(stop.nodes) == 1
    prune = await DFSDTAgent(on_model_error="prune").run(
        model=ScriptedModel(script()),
        env=FakeToolEnv({"search": "x"}),
        query="q",
        budget=Budget(),
        episode=META,
    )
    assert shape(prune) == [(None, "error"), (None, "action"), (1, "finish")]
    assert prune.status is Status.answered and prune.tree["model_errors"] == 1
    assert [e.kind for e in prune.errors] == ["infra"]
    chains = await ReActAtN(n=2, on_model_error="prune").run(
        model=ScriptedModel(script()),
        env=FakeToolEnv({"search": "x"}),
        query="q",
        budget=Budget(),
        episode=META,
    )
    assert chains.status is Status.answered and chains.tree["chain_ends"] == [
        "model_error",
        "answered",
    ]


async def test_a_thought_is_a_node_without_observation_or_feedback() -> None:
    model = ScriptedModel([Turn(content="Let me think."), call("search"), finish()])
    t = await ReActAgent(depth_unit="toolbench_nodes").run(
        model=model, env=FakeToolEnv({"search": "x"}), query="q", budget=Budget(), episode=META
    )
    assert [n.kind for n in t.nodes] == ["thought", "action", "finish"] and not t.errors
    assert model.messages[1][-1] == {"role": "assistant", "content": "Let me think."}
    # the next turn follows the thought directly: two assistant messages in a row
    thought, action, _ = model.messages[2][-3:]
    assert thought == {"role": "assistant", "content": "Let me think."}
    assert action["role"] == "assistant" and action["tool_calls"]


async def test_a_thought_counts_one_toolbench_node() -> None:
    # limit 3 nodes: thought (1) + bare call (2) reaches it, so the chain stops there
    model = ScriptedModel([Turn(content="hmm"), call("search"), finish()])
    t = await ReActAgent(depth_unit="toolbench_nodes").run(
        model=model,
        env=FakeToolEnv({"search": "x"}),
        query="q",
        budget=Budget(max_depth=3),
        episode=META,
    )
    assert [n.kind for n in t.nodes] == ["thought", "action"]
    assert t.end_reason == "budget:max_depth"


# -- 8. observations -----------------------------------------------------------------------------


async def test_observations_are_cut_with_toolbenchs_marker() -> None:
    model = ScriptedModel([call("search"), finish()])
    t = await ReActAgent(max_observation_chars=1024).run(
        model=model,
        env=FakeToolEnv({"search": "é" * 3000}),
        query="q",
        budget=Budget(),
        episode=META,
    )
    obs = t.nodes[0].calls[0].observation
    assert obs is not None and obs.truncated and len(obs.content) == 1024 + 3
    assert obs.content.endswith("...") and model.messages[1][-1]["content"] == obs.content
