"""DFSDT: tree shape, backtracking, diversity prompts, budgets, and equivalence with ReAct."""

from __future__ import annotations

import json

import pytest
from scripted import FakeToolEnv, ScriptedModel, call, finish, give_up, last_tool_count

from agents.agent import Agent, EpisodeMeta
from agents.budget import Budget
from agents.depth import DEFAULT_MAX_DEPTH
from agents.dfsdt import DEFAULT_WIDTH, DFSDTAgent
from agents.errors import ModelError
from agents.finish import GIVE_UP_OBSERVATION
from agents.model import Message, Turn
from agents.prompts import DIVERSITY_HEADER, TOOLBENCH_ACTION_VALUE
from agents.react import ReActAgent
from agents.toolenv import FINISH, GIVE_UP
from agents.trajectory import Status, Trajectory, messages_for

META = EpisodeMeta(scenario_id="t", seed=1)


def env() -> FakeToolEnv:
    return FakeToolEnv({"search": "found", "lookup": "details"})


def asks_for_diversity(messages: list[Message]) -> bool:
    last = messages[-1]
    return last["role"] == "user" and last["content"].startswith(DIVERSITY_HEADER)


async def run(
    model: ScriptedModel,
    tools: FakeToolEnv | None = None,
    agent: DFSDTAgent | None = None,
    **b: int,
) -> Trajectory:
    return await (agent or DFSDTAgent()).run(
        model=model, env=tools or env(), query="q", budget=Budget(**b), episode=META
    )


def shape(t: Trajectory) -> list[tuple[int, int | None, str]]:
    return [(n.id, n.parent, n.kind) for n in t.nodes]


def check_requests(t: Trajectory, model: ScriptedModel) -> None:
    """Each request is the parent's rebuilt history, plus the node's diversity prompt if any."""
    assert len(model.messages) == len(t.nodes)
    for node, sent in zip(t.nodes, model.messages, strict=True):
        history = messages_for(t.prompt, t.path_to(node.parent) if node.parent is not None else [])
        if node.diversity_prompt:
            history.append({"role": "user", "content": node.diversity_prompt})
        assert sent == history


def test_protocol_and_params() -> None:
    agent = DFSDTAgent(width=3)
    assert isinstance(agent, Agent) and agent.name == "dfsdt" and agent.params["width"] == 3
    with pytest.raises(ValueError):
        DFSDTAgent(width=0)


async def test_give_up_at_depth_two_backtracks_to_the_root_and_answers_on_the_sibling() -> None:
    def script(messages: list[Message]) -> Turn:
        if asks_for_diversity(messages):
            return call("lookup", q="b")
        last = messages[-1]
        if last["role"] == "user":
            return call("search", q="a")
        return give_up("no luck") if last["name"] == "search" else finish("found it")

    model = ScriptedModel(script)
    t = await run(model)
    assert shape(t) == [
        (0, None, "action"),
        (1, 0, "give_up"),
        (2, None, "action"),
        (3, 2, "finish"),
    ]
    assert t.status is Status.answered and t.final_answer == "found it"
    assert t.chosen_path == [2, 3]
    assert t.tree["end"] == "answer_found" and t.tree["edges"] == 4
    assert (t.tree["backtracks"], t.tree["give_ups"], t.tree["max_depth"]) == (1, 1, 2)
    check_requests(t, model)
    # the diversity prompt lists the earlier child's action and observation...
    prompt = t.nodes[2].diversity_prompt
    assert prompt is not None and '"search"' in prompt and '{\\"q\\": \\"a\\"}' in prompt
    assert "found" in prompt
    assert [n.diversity_prompt is None for n in t.nodes] == [True, True, False, True]
    # ...and is absent from the descendants' history
    assert all(m["content"] != prompt for m in model.messages[3])


async def test_depth_limit_backtracks_one_level() -> None:
    def script(messages: list[Message]) -> Turn:
        if asks_for_diversity(messages):
            return finish("second try")
        return call("search", q=str(last_tool_count(messages)))

    model = ScriptedModel(script)
    t = await run(model, max_depth=2)
    # node 1 hits the limit; the search retries under node 0, not at the root
    assert shape(t) == [(0, None, "action"), (1, 0, "action"), (2, 0, "finish")]
    assert t.chosen_path == [0, 2] and t.tree["depth_limited"] == 1
    check_requests(t, model)


async def test_toolbench_node_depth_counts_thoughts_and_calls() -> None:
    # ToolBench counts a turn as Thought (if it has text) + Action + Action Input per call.
    # With a limit of 5 nodes: a bare call is 2 nodes, a call with a thought 3, so the second
    # turn (2 + 3 = 5) reaches the limit and the search backtracks one level.
    def script(messages: list[Message]) -> Turn:
        if asks_for_diversity(messages):
            return finish("second try")
        n = last_tool_count(messages)
        return call("search", q=str(n)) if n == 0 else call("search", content="hmm", q=str(n))

    model = ScriptedModel(script)
    agent = DFSDTAgent(depth_unit="toolbench_nodes")
    t = await run(model, agent=agent, max_depth=5)
    assert shape(t) == [(0, None, "action"), (1, 0, "action"), (2, 0, "finish")]
    assert t.tree["depth_limited"] == 1 and agent.params["depth_unit"] == "toolbench_nodes"
    # counted in turns, the same limit lets the chain run five turns deep first
    longer = await run(ScriptedModel(script), max_depth=5)
    assert [parent for _, parent, _ in shape(longer)] == [None, 0, 1, 2, 3, 3]
    assert longer.nodes[-1].kind == "finish"
    with pytest.raises(ValueError):
        DFSDTAgent(depth_unit="meters")  # type: ignore[arg-type]


async def test_exhausted_tree_gives_up_with_the_deterministic_path() -> None:
    model = ScriptedModel(lambda m: call("search", q=str(last_tool_count(m))))
    t = await run(model, max_depth=2)
    assert [(n.parent, n.depth) for n in t.nodes] == [
        (None, 1),
        (0, 2),
        (0, 2),
        (None, 1),
        (3, 2),
        (3, 2),
    ]
    assert t.status is Status.gave_up and t.end_reason == "tree_exhausted"
    assert t.tree["end"] == "tree_exhausted" and t.tree["backtracks"] == 4
    # most successful calls (2), deepest (2), lowest id -> node 1
    assert t.chosen_path == [0, 1] and t.final_answer is None
    assert [n.id for n in t.nodes if n.diversity_prompt] == [2, 3, 5]


async def test_give_up_at_depth_one_ends_the_search_as_in_toolbench() -> None:
    model = ScriptedModel(lambda m: give_up("cannot"))
    t = await run(model)
    assert shape(t) == [(0, None, "give_up")]
    assert t.status is Status.gave_up and t.final_answer == "cannot" and t.chosen_path == [0]


async def test_width_bounds_the_children() -> None:
    model = ScriptedModel(lambda m: call("search", q=str(last_tool_count(m))))
    t = await run(model, agent=DFSDTAgent(width=3), max_depth=2)
    assert len(t.nodes) == 3 + 9
    assert len(t.children(None)) == 3 and all(len(t.children(r.id)) == 3 for r in t.children(None))


async def test_budget_in_the_middle_of_the_tree_keeps_the_tree() -> None:
    model = ScriptedModel(lambda m: call("search", q=str(last_tool_count(m))))
    t = await run(model, max_depth=2, max_model_calls=3)
    assert t.status is Status.budget_exhausted and t.end_reason == "budget:max_model_calls"
    assert t.tree["end"] == "budget" and t.tree["nodes"] == 3
    assert [n.parent for n in t.nodes] == [None, 0, 0] and t.chosen_path == [0, 1]


async def test_model_error_ends_the_search_as_infra() -> None:
    replies: list[Turn | Exception] = [call("search"), ModelError("down", kind="connection")]
    t = await run(ScriptedModel(replies))
    assert t.status is Status.error and t.end_reason == "model_error:connection"
    assert t.tree["end"] == "error" and t.infra_error and t.chosen_path == [0]


async def test_same_calls_as_react_when_the_model_never_gives_up() -> None:
    script: list[Turn | Exception] = [
        call("search", q="a"),
        Turn(content="not a call"),
        call("nope"),
        call("lookup", id=2),
        call("search", q="b"),
        finish("done"),
    ]
    react_model, react_env = ScriptedModel(script), env()
    dfs_model, dfs_env = ScriptedModel(script), env()
    react = await ReActAgent().run(
        model=react_model, env=react_env, query="q", budget=Budget(), episode=META
    )
    dfs = await DFSDTAgent().run(
        model=dfs_model, env=dfs_env, query="q", budget=Budget(), episode=META
    )
    assert dfs_model.requests == react_model.requests
    assert dfs_env.calls == react_env.calls
    assert dfs.nodes == react.nodes and dfs.chosen_path == react.chosen_path
    assert (dfs.status, dfs.final_answer) == (react.status, react.final_answer)
    assert dfs.usage.model_calls == react.usage.model_calls == 6


async def test_a_recorded_tree_replays_exactly() -> None:
    """The requests are rebuilt from the record, so the replay model reproduces the whole tree."""
    from agents.models.replay import ReplayModel

    def script(messages: list[Message]) -> Turn:
        n = last_tool_count(messages)
        if asks_for_diversity(messages):
            return call("lookup", q=str(n)) if n < 2 else finish("ok")
        if n == 0:
            return call("search", q="a")
        if n == 1:
            return Turn(content="hmm") if messages[-1]["role"] == "tool" else call("search", q="x")
        return give_up("stuck")

    recorded = await run(ScriptedModel(script), max_depth=4)
    assert recorded.tree["give_ups"] > 1 and any(n.kind == "thought" for n in recorded.nodes)
    replayed = await run(ReplayModel(recorded), max_depth=4)
    assert replayed.nodes == recorded.nodes and replayed.tree == recorded.tree
    assert (replayed.status, replayed.chosen_path) == (recorded.status, recorded.chosen_path)


async def test_backtracks_count_every_dead_end_a_pruned_model_error_included() -> None:
    """The tree statistics a user reads: each dead end the search climbed out of is one
    backtrack, whatever ended the branch (a give-up, the depth limit, a pruned model call)."""
    replies: list[Turn | Exception] = [
        call("search", q="a"),  # node 0, root's first child
        ModelError("down", kind="connection"),  # node 1 under 0: pruned, the search goes on
        call("search", q="b"),  # node 2 under 0: at the depth limit (2)
        give_up("no way"),  # node 3, root's second child: a give-up at depth 1 ends it
    ]
    t = await run(ScriptedModel(replies), agent=DFSDTAgent(on_model_error="prune"), max_depth=2)
    assert shape(t) == [
        (0, None, "action"),
        (1, 0, "error"),
        (2, 0, "action"),
        (3, None, "give_up"),
    ]
    assert (t.tree["model_errors"], t.tree["depth_limited"], t.tree["give_ups"]) == (1, 1, 1)
    assert t.tree["backtracks"] == 3


def _deep_chain_then_dead_end(dead_end: Turn | None) -> ScriptedModel:
    """A model that calls ``search`` down one chain until ``dead_end`` (None: until the depth
    limit stops it) at the fifth turn, and answers whenever it is asked for another action."""

    def script(messages: list[Message]) -> Turn:
        if asks_for_diversity(messages):
            return finish("elsewhere")
        n = last_tool_count(messages)
        if n == 4 and dead_end is not None:
            return dead_end
        return call("search", q=str(n))

    return ScriptedModel(script)


@pytest.mark.parametrize("levels", [1, 2, 3, 4, 5])
@pytest.mark.parametrize("kind", ["give_up", "depth_limit"])
async def test_a_dead_end_resumes_the_search_the_configured_number_of_levels_up(
    kind: str, levels: int
) -> None:
    """ToolBench's backtracking: a dead end at depth 5 that climbs K levels makes the ancestor
    at depth 5 - K generate its next child (the root when K = 5): after a give-up
    (``give_up_backtrack``) and after a depth cut (``depth_cut_backtrack``) alike."""
    if kind == "give_up":
        agent = DFSDTAgent(give_up_backtrack=levels)
        t = await run(_deep_chain_then_dead_end(give_up("stuck")), agent=agent)
    else:
        agent = DFSDTAgent(depth_cut_backtrack=levels)
        t = await run(_deep_chain_then_dead_end(None), agent=agent, max_depth=5)
    chain = [(i, i - 1 if i else None) for i in range(5)]
    assert [(n.id, n.parent) for n in t.nodes[:5]] == chain and t.nodes[4].depth == 5
    resumed_under = 4 - levels if levels < 5 else None  # the node at depth 5 - K
    assert (t.nodes[5].parent, t.nodes[5].kind) == (resumed_under, "finish")
    assert len(t.nodes) == 6 and t.status is Status.answered and t.final_answer == "elsewhere"


async def test_a_climb_past_the_root_ends_the_search() -> None:
    """A dead end that climbs more levels than it is deep leaves no node to resume from: the
    search ends without generating another node."""
    t = await run(
        _deep_chain_then_dead_end(give_up("stuck")), agent=DFSDTAgent(give_up_backtrack=6)
    )
    assert len(t.nodes) == 5 and t.status is Status.gave_up and t.tree["give_ups"] == 1


def _earlier_attempts(prompt: str | None) -> tuple[list[dict[str, str]], str | None]:
    """The earlier actions a diversity prompt lists, and its reminder of the last result."""
    assert prompt is not None and prompt.startswith(DIVERSITY_HEADER)
    listed = prompt.split("with these results:\n", 1)[1]
    reminder = None
    if "\nAs a reminder, the last result you observed here was: " in listed:
        listed, rest = listed.split("\nAs a reminder, the last result you observed here was: ")
        reminder = rest.split("\nThose attempts did not solve the task.")[0]
    else:
        listed = listed.split("\nThose attempts did not solve the task.")[0]
    return json.loads(listed), reminder


async def test_the_diversity_prompt_lists_each_earlier_siblings_first_action() -> None:
    """What the next child is told about its earlier siblings: a give-up as the ``Finish`` call
    it made (no ``final_answer`` when it gave no reason) with the give-up observation; a call
    with its arguments and its result; a thought as the first action below it; a failed model
    call as nothing (when it is the only sibling, no prompt at all). The reminder of the last
    result is the parent's own last observation, absent under a thought."""
    replies: list[Turn | Exception] = [
        Turn(content="let me think"),  # node 0: a thought at the root
        call("search", q="a"),  # node 1 under 0
        give_up(""),  # node 2 under 1: climbs one level, node 1 tries again
        ModelError("down", kind="connection"),  # node 3 under 1: pruned; node 1 is done
        ModelError("down", kind="connection"),  # node 4 under 0: pruned; node 0 is done
        finish("done"),  # node 5: the root's second child
    ]
    agent = DFSDTAgent(give_up_backtrack=1, on_model_error="prune")
    t = await run(ScriptedModel(replies), agent=agent)
    assert shape(t) == [
        (0, None, "thought"),
        (1, 0, "action"),
        (2, 1, "give_up"),
        (3, 1, "error"),
        (4, 0, "error"),
        (5, None, "finish"),
    ]
    search_result = json.dumps({"error": "", "response": "found"})
    the_search = {"name": "search", "arguments": '{"q": "a"}', "function_output": search_result}
    the_give_up = {
        "name": FINISH,
        "arguments": json.dumps({"return_type": GIVE_UP}),
        "function_output": GIVE_UP_OBSERVATION,
    }
    assert _earlier_attempts(t.nodes[3].diversity_prompt) == ([the_give_up], search_result)
    assert _earlier_attempts(t.nodes[4].diversity_prompt) == ([the_search], None)
    assert _earlier_attempts(t.nodes[5].diversity_prompt) == ([the_search], None)
    assert [n.diversity_prompt is None for n in t.nodes[:3]] == [True, True, True]


async def test_a_give_up_with_a_reason_is_listed_with_it_and_a_lone_failed_call_asks_nothing() -> (
    None
):
    replies: list[Turn | Exception] = [
        ModelError("down", kind="connection"),  # node 0: pruned
        call("search", q="a"),  # node 1: asked plainly, its only earlier sibling failed
        give_up("no luck"),  # node 2 under 1
        finish("done"),  # node 3 under 1
    ]
    agent = DFSDTAgent(give_up_backtrack=1, on_model_error="prune")
    t = await run(ScriptedModel(replies), agent=agent)
    assert shape(t) == [
        (0, None, "error"),
        (1, None, "action"),
        (2, 1, "give_up"),
        (3, 1, "finish"),
    ]
    assert t.nodes[1].diversity_prompt is None
    (listed,), _ = _earlier_attempts(t.nodes[3].diversity_prompt)
    assert json.loads(listed["arguments"]) == {"return_type": GIVE_UP, "final_answer": "no luck"}


async def test_the_tree_statistics_record_the_width_the_depth_limit_and_the_deepest_level() -> None:
    """What a user reads of a search besides its counts: the width it searched with, the depth
    limit it applied (the budget's, else the default of the depth unit) and the deepest level it
    reached."""
    model = ScriptedModel([call("search", q="a"), call("search", q="b"), finish("done")])
    t = await run(model, agent=DFSDTAgent(width=3), max_depth=4)
    assert (t.tree["width"], t.tree["depth_limit"], t.tree["max_depth"]) == (3, 4, 3)
    default = await run(ScriptedModel([finish("done")]))
    assert (default.tree["width"], default.tree["depth_limit"], default.tree["max_depth"]) == (
        DEFAULT_WIDTH,
        DEFAULT_MAX_DEPTH["turns"],
        1,
    )


async def test_a_search_stopped_before_its_first_model_call_has_an_empty_tree() -> None:
    """A wall-clock budget spent before the first request: no node, and the statistics say so
    (no level reached, nothing counted) instead of failing."""
    t = await run(ScriptedModel([finish("never asked")]), max_seconds=1e-9)
    assert t.nodes == [] and t.status is Status.budget_exhausted
    assert (t.tree["nodes"], t.tree["max_depth"], t.tree["backtracks"]) == (0, 0, 0)


async def test_a_thought_cut_at_the_depth_limit_leaves_its_sibling_nothing_to_differ_from() -> None:
    """A thought that reached the depth limit has no action below it: the next sibling is asked
    without a diversity prompt rather than the search failing."""
    t = await run(ScriptedModel([Turn(content="hmm"), finish("done")]), max_depth=1)
    assert shape(t) == [(0, None, "thought"), (1, None, "finish")]
    assert t.nodes[1].diversity_prompt is None and t.status is Status.answered


async def test_the_toolbench_diversity_prompt_escapes_non_ascii_and_adds_the_action_value() -> None:
    """``diversity_prompt="toolbench"`` lists the earlier actions as ToolBench's DFS writes them
    (ASCII-escaped JSON, each with its constant action value); the project's own prompt keeps
    the text as the model wrote it."""
    replies: list[Turn | Exception] = [
        call("search", q="a"),
        give_up("pas de vol pour Zürich"),
        finish("done"),
    ]
    plain = await run(ScriptedModel(replies), agent=DFSDTAgent(give_up_backtrack=1))
    (listed,), _ = _earlier_attempts(plain.nodes[2].diversity_prompt)
    assert '"final_answer": "pas de vol pour Zürich"' in listed["arguments"]
    assert "Zürich" in (plain.nodes[2].diversity_prompt or "")
    agent = DFSDTAgent(give_up_backtrack=1, diversity_prompt="toolbench")
    toolbench = await run(ScriptedModel(replies), agent=agent)
    prompt = toolbench.nodes[2].diversity_prompt or ""
    assert prompt.isascii() and "Z\\u00fcrich" in prompt
    (listed,), _ = _earlier_attempts(prompt)
    assert listed[TOOLBENCH_ACTION_VALUE] == 0.0
    assert json.loads(listed["arguments"])["final_answer"] == "pas de vol pour Zürich"
