"""``rules-judge``: ToolEval's functions answered from the task's checks, offline, through the
same client as an LLM judge (``Judge.ask`` -> ``OpenAICompatModel`` -> an in-process endpoint).
So the ``toolbench`` protocol runs and is tested without a fake server, and every output says
the judge is not an LLM."""

from __future__ import annotations

import json

import pytest
from outcome_builders import add_call, task, traj

from agents.trajectory import Status
from sandbox.eval.judge import Judge
from sandbox.eval.protocol import JudgeSettings
from sandbox.eval.protocols import get_protocol
from sandbox.eval.tooleval.answer import converted_answer
from sandbox.eval.tooleval.functions import better_fields
from sandbox.eval.tooleval.rules_judge import RulesJudgeEndpoint, rules_judge
from sandbox.eval.win_rate import RunSide

CHECKED = task("checked", query="What is 2 + 3?", checks=[{"kind": "contains", "value": "5"}])
OPEN = task("open", query="Tell me something.")
IMPOSSIBLE = task("impossible", query="Refund my order.", solvable=False)
TASKS = [CHECKED, OPEN, IMPOSSIBLE]
TOOLBENCH = get_protocol("toolbench")


def _finish(text: str) -> str:
    return json.dumps({"return_type": "give_answer", "final_answer": text})


@pytest.fixture
async def judge():
    model = rules_judge(TASKS)
    yield Judge(model, kind="rules")
    await model.aclose()


@pytest.mark.parametrize(
    ("query", "answer", "status"),
    [
        (CHECKED.query, "It is 5.", "Solved"),
        (CHECKED.query, "It is 6.", "Unsolved"),
        (CHECKED.query, "", "Unsolved"),
        (OPEN.query, "Something.", "Unsure"),
        (IMPOSSIBLE.query, "I cannot refund orders: no tool does it.", "Solved"),
        (IMPOSSIBLE.query, "Done, refunded.", "Unsure"),
        ("A query of no task", "5", "Unsure"),
    ],
)
async def test_answer_status_follows_the_checks(judge, query, answer, status) -> None:
    reply = await judge.ask("check_answer_status", {"query": query, "answer": _finish(answer)})
    assert reply["answer_status"] == status
    whole = json.dumps({"final_answer": _finish(answer)})
    second = await judge.ask("parse_answer_status", {"query": query, "answer": whole})
    assert second["answer_status"] == status


async def test_the_other_functions(judge) -> None:
    solvable = await judge.ask("check_task_solvable", {"task": json.dumps({"query": OPEN.query})})
    unsolvable = await judge.ask(
        "check_task_solvable", {"task": json.dumps({"query": IMPOSSIBLE.query})}
    )
    assert (solvable["task_status"], unsolvable["task_status"]) == ("Solvable", "Unsolvable")
    right = {"final_answer": _finish("5"), "total_steps": 4}
    wrong = {"final_answer": _finish("6"), "total_steps": 2}
    for first, second, better in ((right, wrong, 0), (wrong, right, 1)):
        reply = await judge.ask(
            "select_better_answer", better_fields(CHECKED.query, first, second), reason=True
        )
        assert reply["index"] == better and reply["reason"]
    shorter = {"final_answer": _finish("5"), "total_steps": 2}
    reply = await judge.ask("select_better_answer", better_fields(CHECKED.query, right, shorter))
    assert reply["index"] == 1  # the same verdict: the fewer steps
    solved = await judge.ask("check_solve_query", {"query": CHECKED.query, "final_answer": "5"})
    assert solved["is_solved"] is True
    best = await judge.ask(
        "select_best_final_answer",
        {"query": CHECKED.query, "final_answers": json.dumps(["six", "it is 5"])},
        choices=2,
    )
    assert best["best_answer_index"] == 1


async def test_answer_details_count_successful_calls_and_tool_names() -> None:
    endpoint = RulesJudgeEndpoint(TASKS)
    failed = add_call(1, 1, i=1)
    assert failed.observation is not None
    failed.observation = failed.observation.model_copy(
        update={"ok": False, "content": json.dumps({"error": "boom", "response": ""})}
    )
    answer = converted_answer(traj("checked", answer="5", calls=[[add_call(2, 3)], [failed]]))
    reply = endpoint.decide(
        "parse_answer_details", {"answer_details": json.dumps(answer["answer_details"])}
    )
    assert reply == {"succeed_tool_calling": 1, "used_tool_types": 1}


async def test_the_toolbench_protocol_runs_on_the_rules_judge_without_a_server(judge) -> None:
    """ToolEval's pass rate, label for label, with the rules deciding: the shortcuts still ask
    nothing; answered episodes get the checks' verdict in every sample."""
    trajs = [
        traj("checked", answer="It is 5."),
        traj("open", answer="Something."),
        traj("impossible", status=Status.gave_up, answer=None, give_up_text="cannot"),
    ]
    keys = [(t.id, 0) for t in TASKS]
    labels = await TOOLBENCH.label(trajs, TASKS, keys, judge, JudgeSettings(samples=2))
    assert [(lb.label, lb.method, lb.samples) for lb in labels] == [
        ("solved", "judge", ["solved", "solved"]),
        ("unsure", "judge", ["unsure", "unsure"]),
        ("unsolved", "rule", ["unsolved", "unsolved"]),
    ]
    assert judge.usage.kind == "rules" and judge.usage.calls == 6  # 2 x (1 + a second look)
    summary = TOOLBENCH.summarise(labels, TASKS, seed=0)
    assert summary.pass_rate.value == pytest.approx(0.5) and summary.sample_std == 0.0


async def test_the_toolbench_win_rate_runs_on_the_rules_judge(judge) -> None:
    mine = [traj("checked", answer="5"), traj("open", answer="x")]
    theirs = [traj("checked", answer="6", run_id="r2"), traj("open", answer="y", run_id="r2")]
    keys = [("checked", 0), ("open", 0)]
    settings = JudgeSettings(rounds=2)
    tasks = [CHECKED, OPEN]
    a = RunSide(
        name="a",
        trajectories=mine,
        labels=await TOOLBENCH.label(mine, tasks, keys, judge, settings),
    )
    b = RunSide(
        name="b",
        trajectories=theirs,
        labels=await TOOLBENCH.label(theirs, tasks, keys, judge, settings),
    )
    outcomes = await TOOLBENCH.prefer(a, b, tasks, judge, settings, seed=0)
    winners = {o.task_id: o.winner for o in outcomes}
    assert winners == {"checked": "candidate", "open": "tie"}
