"""What the offline ``rules-judge`` answers to each of ToolEval's functions, reasons included
(the table in ``sandbox/eval/tooleval/rules_judge.py``'s module doc), and the chat completion
it sends back: expected answers are worked out by hand from that table."""

from __future__ import annotations

import json
from typing import Any

import pytest
from outcome_builders import task

from sandbox.eval.judge import RULES_JUDGE
from sandbox.eval.tooleval.functions import prompt_for
from sandbox.eval.tooleval.rules_judge import RulesJudgeEndpoint, rules_judge

CHECKED = task(
    "checked",
    query="What is  2 + 3?",
    checks=[{"kind": "contains", "value": "5"}, {"kind": "contains", "value": "sum"}],
)
OPEN = task("open", query="Tell me something.")
IMPOSSIBLE = task("impossible", query="Refund my order.", solvable=False)
TWINS = [task("twin-1", query="Same words."), task("twin-2", query="Same   words.")]
ENDPOINT = RulesJudgeEndpoint([CHECKED, OPEN, IMPOSSIBLE, *TWINS])


def _finish(text: str) -> str:
    return json.dumps({"return_type": "give_answer", "final_answer": text})


def test_a_task_is_found_by_its_query_whatever_the_spacing() -> None:
    assert ENDPOINT.task("What is 2 +\n3?") is CHECKED
    assert ENDPOINT.task(" Tell me   something. ") is OPEN
    assert ENDPOINT.task("Same words.") is None  # two tasks ask it: ambiguous
    assert ENDPOINT.task("Unknown.") is None


@pytest.mark.parametrize(
    ("query", "answer", "verdict"),
    [
        (CHECKED.query, _finish("the sum is 5"), ("Solved", "all checks pass")),
        (CHECKED.query, "the sum is 5", ("Solved", "all checks pass")),  # plain text too
        (
            CHECKED.query,
            _finish("it is 6"),
            ("Unsolved", "failed checks: contains: missing: '5'; contains: missing: 'sum'"),
        ),
        (CHECKED.query, _finish("sum: 6"), ("Unsolved", "failed checks: contains: missing: '5'")),
        (CHECKED.query, _finish("  "), ("Unsolved", "empty final answer")),
        ("Unknown.", _finish(""), ("Unsolved", "empty final answer")),  # empty comes first
        ("Unknown.", _finish("5"), ("Unsure", "the query is not a task of the suite")),
        (
            IMPOSSIBLE.query,
            _finish("I cannot refund it: no tool does that."),
            ("Solved", "explains that the task cannot be done"),
        ),
        (IMPOSSIBLE.query, _finish("Refunded."), ("Unsure", "no checks to decide by")),
        (OPEN.query, _finish("I cannot do that."), ("Unsure", "no checks to decide by")),
    ],
)
def test_the_verdict_and_its_reason(query: str, answer: str, verdict: tuple[str, str]) -> None:
    assert ENDPOINT.verdict(query, answer) == verdict


def test_answer_status_questions() -> None:
    first = ENDPOINT.decide(
        "check_answer_status", {"query": CHECKED.query, "answer": _finish("sum 5")}
    )
    assert first == {"answer_status": "Solved", "reason": "all checks pass"}
    whole = json.dumps({"final_answer": _finish("sum 5"), "total_steps": 3})
    second = ENDPOINT.decide("parse_answer_status", {"query": CHECKED.query, "answer": whole})
    assert second == {"answer_status": "Solved", "reason": "all checks pass"}
    # the second look reads the final answer out of the whole answer: none there, nothing said
    for broken in ("not json", "[1, 2]", json.dumps({"total_steps": 3})):
        assert ENDPOINT.decide(
            "parse_answer_status", {"query": CHECKED.query, "answer": broken}
        ) == {"answer_status": "Unsolved", "reason": "empty final answer"}


def test_task_solvable_questions() -> None:
    def ask(task_json: str) -> dict[str, Any]:
        return ENDPOINT.decide("check_task_solvable", {"task": task_json})

    reason = "the task's solvable flag"
    assert ask(json.dumps({"query": OPEN.query})) == {"task_status": "Solvable", "reason": reason}
    assert ask(json.dumps({"query": IMPOSSIBLE.query})) == {
        "task_status": "Unsolvable",
        "reason": reason,
    }
    for unknown in (json.dumps({"query": "Unknown."}), json.dumps({}), "{broken"):
        assert ask(unknown) == {"task_status": "Unsure", "reason": reason}


def _better(first: dict[str, Any], second: dict[str, Any]) -> Any:
    fields = {"query": CHECKED.query, "answer_0": json.dumps(first), "answer_1": json.dumps(second)}
    return ENDPOINT.decide("select_better_answer", fields)


def test_the_better_answer_by_verdict_then_steps_then_the_first() -> None:
    solved = {"final_answer": _finish("sum 5"), "total_steps": 9}
    shorter = {"final_answer": _finish("sum 5"), "total_steps": 2}
    unsolved = {"final_answer": _finish("6"), "total_steps": 2}
    assert _better(solved, unsolved) == {"index": 0, "reason": "verdict, steps"}
    assert _better(unsolved, solved)["index"] == 1
    # the same verdict: fewer steps; then answer 0
    assert _better(solved, shorter)["index"] == 1 and _better(shorter, solved)["index"] == 0
    assert _better(unsolved, {**unsolved, "total_steps": 3})["index"] == 0
    assert _better(unsolved, dict(unsolved))["index"] == 0
    # an answer without steps counts none, fewer than 1; a broken one is empty, so Unsolved
    assert _better({"final_answer": _finish("7")}, unsolved)["index"] == 0
    one_step = {**unsolved, "total_steps": 1}
    assert _better(one_step, {"final_answer": _finish("7")})["index"] == 1
    fields = {"query": CHECKED.query, "answer_0": "{oops", "answer_1": json.dumps(solved)}
    assert ENDPOINT.decide("select_better_answer", fields)["index"] == 1


def test_the_unsure_verdict_ranks_between_solved_and_unsolved() -> None:
    judge = RulesJudgeEndpoint([OPEN, CHECKED])

    def better(a: str, b: str) -> int:
        fields = {
            "query": OPEN.query,
            "answer_0": json.dumps({"final_answer": a, "total_steps": 1}),
            "answer_1": json.dumps({"final_answer": b, "total_steps": 5}),
        }
        return int(judge.decide("select_better_answer", fields)["index"])

    # OPEN has no checks: any answer is Unsure, an empty one Unsolved
    assert better("", _finish("words")) == 1
    assert better(_finish("words"), "") == 0


def test_solve_query_and_best_final_answer_questions() -> None:
    assert ENDPOINT.decide(
        "check_solve_query", {"query": CHECKED.query, "final_answer": "sum 5"}
    ) == {"is_solved": True, "reason": "all checks pass"}
    assert ENDPOINT.decide("check_solve_query", {"query": OPEN.query, "final_answer": "hello"}) == {
        "is_solved": False,
        "reason": "no checks to decide by",
    }

    def best(finals: Any) -> dict[str, Any]:
        fields = {"query": CHECKED.query, "final_answers": json.dumps(finals)}
        return ENDPOINT.decide("select_best_final_answer", fields)

    why = "the first answer the checks accept"
    assert best(["6", "sum 5", "5 sum"]) == {"best_answer_index": 1, "reason": why}
    assert best(["6", "7"]) == {"best_answer_index": 0, "reason": why}
    assert best({"not": "a list"}) == {"best_answer_index": 0, "reason": why}


def _tool(name: str, response: str) -> dict[str, Any]:
    return {"role": "tool", "message": {"name": name, "arguments": "{}", "response": response}}


def _details(*nodes: dict[str, Any]) -> str:
    chain: list[Any] = []
    for node in reversed(nodes):
        chain = [{**node, "next": chain}]
    return json.dumps(chain)


def test_answer_details_count_calls_without_an_error_and_distinct_names() -> None:
    """``Finish`` is no tool call; a response that is no JSON object holds no error; a node
    whose message is no object (a string) is skipped."""
    details = _details(
        {"role": "user", "message": "q"},
        _tool("search", json.dumps({"error": "", "response": "ok"})),
        _tool("search", json.dumps({"error": "timeout", "response": ""})),
        _tool("lookup", "plain text"),
        _tool("", json.dumps({"error": ""})),
        {"role": "tool", "message": "{'name': 'repr', 'response': ''}"},
        _tool("Finish", json.dumps({"error": ""})),
    )
    reply = ENDPOINT.decide("parse_answer_details", {"answer_details": details})
    assert reply == {"succeed_tool_calling": 2, "used_tool_types": 2}
    empty = ENDPOINT.decide("parse_answer_details", {"answer_details": "{broken"})
    assert empty == {"succeed_tool_calling": 0, "used_tool_types": 0}


def test_an_unknown_function_is_refused() -> None:
    with pytest.raises(KeyError, match="ask_anything"):
        ENDPOINT.decide("ask_anything", {})


def _body(function: str | None, content: str) -> dict[str, Any]:
    body: dict[str, Any] = {"messages": [{"role": "user", "content": content}]}
    if function is not None:
        body["tool_choice"] = {"type": "function", "function": {"name": function}}
    return body


def test_the_completion_is_a_forced_call_of_the_function_asked() -> None:
    prompt = prompt_for("check_solve_query", query=CHECKED.query, final_answer="sum 5")
    completion = ENDPOINT.complete(_body("check_solve_query", prompt))
    assert completion == {
        "id": "rules-judge",
        "object": "chat.completion",
        "created": 0,
        "model": RULES_JUDGE,
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "call_0",
                            "type": "function",
                            "function": {
                                "name": "check_solve_query",
                                "arguments": json.dumps(
                                    {"is_solved": True, "reason": "all checks pass"}
                                ),
                            },
                        }
                    ],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
    }


def test_the_call_arguments_keep_non_ascii_text() -> None:
    """A reason quoting a check (here a missing ``café``) reaches the judge client as written."""
    judge = RulesJudgeEndpoint(
        [task("fr", query="Où ?", checks=[{"kind": "contains", "value": "café"}])]
    )
    prompt = prompt_for("check_answer_status", query="Où ?", answer=_finish("thé"))
    completion = judge.complete(_body("check_answer_status", prompt))
    arguments = completion["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]
    assert arguments == (
        '{"answer_status": "Unsolved", "reason": "failed checks: contains: missing: \'café\'"}'
    )


@pytest.mark.parametrize(
    "body",
    [
        _body(None, prompt_for("check_solve_query", query="q", final_answer="a")),
        _body("check_solve_query", "Is this solved? Say yes."),  # not ToolEval's prompt
        _body("no_such_function", "anything"),
        {"tool_choice": {"type": "function", "function": {"name": "check_solve_query"}}},
        {"tool_choice": "auto", "messages": [{"role": "user", "content": "hi"}]},
    ],
)
def test_a_request_that_is_no_tooleval_question_gets_a_plain_refusal(body: dict[str, Any]) -> None:
    completion = ENDPOINT.complete(body)
    assert completion["choices"][0]["message"] == {
        "role": "assistant",
        "content": "I answer ToolEval only.",
    }
    assert completion["model"] == RULES_JUDGE


async def test_the_model_lists_itself_as_the_rules_judge() -> None:
    model = rules_judge([OPEN])
    try:
        assert await model.probe() == [RULES_JUDGE]
        assert model.name == RULES_JUDGE
    finally:
        await model.aclose()
