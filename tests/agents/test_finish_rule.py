"""A turn that calls ``Finish(give_answer)`` and then other functions.

What it protects: under both finish rules every call of the turn runs; the default answers with
the ``Finish``'s own answer, ToolBench's rule (the presets) with the argument text of the turn's
last call, which ToolBench's loops record as the final answer (the chain's terminal node is the
last call's Action Input). Where the ``Finish`` stood is recorded, so a replay rebuilds the turn
in its order and an export stops at the ``Finish`` as ToolBench's converter does."""

from __future__ import annotations

import json

import pytest
from scripted import FakeToolEnv, ScriptedModel

from agents import Budget, EpisodeMeta, ReActAgent
from agents.model import ToolCall, Turn
from agents.models.replay import turn_for
from agents.step import interpret_turn
from agents.toolenv import FINISH, GIVE_ANSWER, GIVE_UP
from agents.trajectory import Trajectory

ANSWER = json.dumps({"return_type": GIVE_ANSWER, "final_answer": "it is 42"})
GIVING_UP = json.dumps({"return_type": GIVE_UP, "final_answer": ""})


def turn(*calls: tuple[str, str]) -> Turn:
    return Turn(
        tool_calls=[ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(calls)]
    )


class RuledEnv(FakeToolEnv):
    def __init__(self, rule: str) -> None:
        super().__init__({"search": "found", "lookup": "details"})
        self.finish_rule = rule


async def run(rule: str, script: list[Turn]) -> tuple[Trajectory, RuledEnv]:
    env = RuledEnv(rule)
    traj = await ReActAgent().run(
        model=ScriptedModel(script),
        env=env,
        query="q",
        budget=Budget(),
        episode=EpisodeMeta(scenario_id="t", run_id="r"),
    )
    return traj, env


@pytest.mark.parametrize(
    ("rule", "answer"),
    [("first_finish", "it is 42"), ("toolbench", '{"q": "late"}')],
)
async def test_a_finish_before_another_call_answers_by_the_rule(rule: str, answer: str) -> None:
    """Both rules run the later call; ToolBench's records its arguments as the answer."""
    late = ("search", '{"q": "late"}')
    traj, env = await run(rule, [turn((FINISH, ANSWER), late)])
    assert (traj.status.value, traj.final_answer) == ("answered", answer)
    assert env.calls == [("search", {"q": "late"})]
    (node,) = traj.nodes
    assert node.finish is not None and node.finish.position == 0
    assert node.finish.late_answer == (answer if rule == "toolbench" else None)


def test_the_last_call_after_the_finish_gives_toolbenchs_answer() -> None:
    """Two calls after the Finish: the last one's text; a give-up followed by a call, or a Finish
    that ends its turn, keeps its own answer and records no position."""
    plan = interpret_turn(
        turn(("search", "{}"), (FINISH, ANSWER), ("search", '{"a": 1}'), ("lookup", "{}")),
        ["search", "lookup"],
        finish_rule="toolbench",
    )
    assert plan.finish is not None
    assert (plan.finish.position, plan.finish.late_answer) == (1, "{}")
    assert [c.name for c in plan.calls] == ["search", "search", "lookup"]
    gave_up = interpret_turn(
        turn((FINISH, GIVING_UP), ("search", "{}")), ["search"], "exact", "toolbench"
    )
    assert gave_up.kind == "give_up" and gave_up.finish is not None
    assert (gave_up.finish.position, gave_up.finish.late_answer) == (0, None)
    last = interpret_turn(
        turn(("search", "{}"), (FINISH, ANSWER)), ["search"], "exact", "toolbench"
    )
    assert last.finish is not None
    assert (last.finish.position, last.finish.late_answer, last.finish.answer) == (
        None,
        None,
        "it is 42",
    )


async def test_a_replay_rebuilds_the_turn_with_its_finish_in_place() -> None:
    """The replayed turn puts the Finish back where it stood, so the rule gives the same answer;
    the record leaves position and late_answer out when they are not set."""
    traj, _ = await run("toolbench", [turn(("lookup", "{}"), (FINISH, ANSWER), ("search", "{}"))])
    rebuilt = turn_for(traj.nodes[0])
    assert [c.name for c in rebuilt.tool_calls] == ["lookup", FINISH, "search"]
    again = interpret_turn(rebuilt, ["search", "lookup"], "exact", "toolbench")
    assert again.finish == traj.nodes[0].finish
    plain, _ = await run("toolbench", [turn((FINISH, ANSWER))])
    assert plain.nodes[0].finish is not None
    assert set(plain.nodes[0].finish.model_dump()) == {"return_type", "final_answer"}
