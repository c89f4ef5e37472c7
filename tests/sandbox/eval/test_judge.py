"""The judge client over real HTTP: ToolEval's functions with a forced ``tool_choice``, replies
checked, unparseable replies retried then reported as an infrastructure error, a request cache."""

from __future__ import annotations

from pathlib import Path

import pytest
from tooleval_judge_server import ToolEvalJudgeServer

from sandbox.eval.judge import ATTEMPT_SEED_STRIDE, Judge, JudgeError, reply_arguments
from sandbox.eval.tooleval.functions import FUNCTIONS, tool_for, valid_reply
from sandbox.models.cache import RequestCache
from tests.agents.models.openai_server import error_reply, text_reply, tool_call_reply


async def test_a_question_is_one_user_message_and_one_forced_function(
    judge_server: ToolEvalJudgeServer,
) -> None:
    judge = Judge(judge_server.model())
    reply = await judge.ask(
        "check_answer_status", {"query": "q", "answer": "42"}, index=2, reason=True
    )
    assert reply == {"answer_status": "Solved", "reason": "scripted"}
    (body,) = judge_server.requests
    assert [m["role"] for m in body["messages"]] == ["user"]
    assert body["tool_choice"] == {"type": "function", "function": {"name": "check_answer_status"}}
    (tool,) = body["tools"]
    params = tool["function"]["parameters"]
    assert tool["function"]["name"] == "check_answer_status"
    assert params["properties"]["answer_status"]["enum"] == ["Solved", "Unsolved", "Unsure"]
    assert params["required"] == ["answer_status", "reason"]
    assert body["temperature"] == 0.2 and body["seed"] == 2  # ToolEval's temperature; sample 2


def test_toolevals_function_and_argument_names() -> None:
    names = {
        "check_answer_status": ["answer_status"],
        "parse_answer_status": ["answer_status"],
        "check_task_solvable": ["task_status"],
        "select_better_answer": ["index"],
        "check_solve_query": ["is_solved"],
        "parse_answer_details": ["succeed_tool_calling", "used_tool_types"],
        "select_best_final_answer": ["best_answer_index"],
    }
    assert {f: list(s["parameters"]["properties"]) for f, s in FUNCTIONS.items()} == names
    task_status = tool_for("check_task_solvable")["function"]["parameters"]["properties"]
    assert set(task_status["task_status"]["enum"]) == {"Solvable", "Unsolvable", "Unsure"}


def test_reply_validation_is_strict() -> None:
    assert valid_reply("check_answer_status", {"answer_status": "Solved"}) is not None
    assert valid_reply("check_answer_status", {"answer_status": "solved"}) is None
    assert valid_reply("check_answer_status", {"status": "Solved"}) is None
    assert valid_reply("select_better_answer", {"index": "1"}) == {"index": 1}
    assert valid_reply("select_better_answer", {"index": 1.0}) == {"index": 1}
    assert valid_reply("select_better_answer", {"index": 2}) is None
    assert valid_reply("select_better_answer", {"index": True}) is None
    assert valid_reply("check_solve_query", {"is_solved": "false"}) is None
    assert valid_reply("select_best_final_answer", {"best_answer_index": 2}, choices=3)
    assert valid_reply("select_best_final_answer", {"best_answer_index": 3}, choices=3) is None
    assert valid_reply("parse_answer_details", {"succeed_tool_calling": 2}) is None


async def test_a_plain_not_solved_is_retried_then_an_infra_error_never_a_label(
    judge_server: ToolEvalJudgeServer, tmp_path: Path
) -> None:
    # today's regression: a non-JSON "not solved" parsed as Solved
    judge_server.default = lambda body: text_reply("not solved")
    cache = RequestCache(tmp_path / "judge.sqlite")
    judge = Judge(judge_server.model(), cache=cache)
    with pytest.raises(JudgeError, match="no valid check_answer_status reply in 3 attempts"):
        await judge.ask("check_answer_status", {"query": "q", "answer": "a"}, index=1)
    assert judge.usage.calls == 3 and judge.usage.invalid_replies == 3 and judge.usage.errors == 1
    # each retry is a new sample (another seed), and nothing invalid was cached
    assert [r["seed"] for r in judge_server.requests] == [
        1 + k * ATTEMPT_SEED_STRIDE for k in range(3)
    ]
    assert len(cache) == 0


async def test_an_invalid_reply_then_a_valid_one(judge_server: ToolEvalJudgeServer) -> None:
    judge_server.push(
        tool_call_reply("check_answer_status", {"answer_status": "Maybe"}),
        tool_call_reply("select_better_answer", {"index": 0}),  # the wrong function
        tool_call_reply("check_answer_status", {"answer_status": "Unsolved"}),
    )
    judge = Judge(judge_server.model())
    reply = await judge.ask("check_answer_status", {"query": "q", "answer": "a"})
    assert reply["answer_status"] == "Unsolved" and judge.usage.invalid_replies == 2


async def test_a_server_ignoring_tool_choice_may_answer_with_one_json_object(
    judge_server: ToolEvalJudgeServer,
) -> None:
    judge_server.push(text_reply('```json\n{"answer_status": "Unsure"}\n```'))
    judge = Judge(judge_server.model())
    reply = await judge.ask("check_answer_status", {"query": "q", "answer": "a"})
    assert reply == {"answer_status": "Unsure"}
    from agents.model import Turn

    assert reply_arguments(Turn(content='It is {"answer_status": "Solved"}'), "x") is None


async def test_an_endpoint_failure_is_a_judge_error(judge_server: ToolEvalJudgeServer) -> None:
    judge_server.push(error_reply(500))
    judge = Judge(judge_server.model())
    with pytest.raises(JudgeError, match="failed"):
        await judge.ask("check_answer_status", {"query": "q", "answer": "a"})
    assert judge.usage.errors == 1


async def test_cost_comes_from_the_priced_judge_model(judge_server: ToolEvalJudgeServer) -> None:
    # the fake reports 10 prompt and 5 completion tokens per reply
    judge = Judge(judge_server.model(price_prompt=0.001, price_completion=0.002))
    await judge.ask("check_answer_status", {"query": "q", "answer": "a"})
    await judge.ask("check_answer_status", {"query": "q", "answer": "b"})
    assert judge.usage.cost == pytest.approx(2 * (10 * 0.001 + 5 * 0.002))
    assert (judge.usage.prompt_tokens, judge.usage.completion_tokens) == (20, 10)


async def test_cached_second_run_makes_no_http_call(
    judge_server: ToolEvalJudgeServer, tmp_path: Path
) -> None:
    path = tmp_path / "judge.sqlite"
    judge_server.statuses["MIXED"] = ["Solved", "Unsolved"]
    first = Judge(judge_server.model(), cache=RequestCache(path))
    verdicts = [
        (await first.ask("check_answer_status", {"query": "q", "answer": "MIXED"}, index=i))[
            "answer_status"
        ]
        for i in range(2)
    ]
    assert verdicts == ["Solved", "Unsolved"] and first.usage.calls == 2

    before = len(judge_server.requests)
    second = Judge(judge_server.model(), cache=RequestCache(path))
    again = [
        (await second.ask("check_answer_status", {"query": "q", "answer": "MIXED"}, index=i))[
            "answer_status"
        ]
        for i in range(2)
    ]
    assert again == verdicts and len(judge_server.requests) == before
    assert (second.usage.calls, second.usage.cache_hits) == (0, 2)
