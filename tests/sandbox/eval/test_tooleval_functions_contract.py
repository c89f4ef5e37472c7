"""The judge's interface (``sandbox.eval.tooleval.functions``): the ``tools`` entry a judge is
offered (ToolEval's ``function_call`` with ``return_reason``), prompts that read back into their
fields (what the offline rules judge relies on), and which replies answer the question
(ToolEval's ``AnswerStatus(x)`` / ``int(...)`` reading). Expected values are written by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from sandbox.eval.tooleval.functions import (
    FUNCTIONS,
    _schema,
    better_fields,
    prompt_fields,
    prompt_for,
    tool_for,
    valid_reply,
)


def test_the_offered_tool_is_the_one_function_with_its_parameters() -> None:
    assert tool_for("check_solve_query") == {
        "type": "function",
        "function": {
            "name": "check_solve_query",
            "description": "Judge whether a final answer solves the query.",
            "parameters": {
                "type": "object",
                "properties": {
                    "is_solved": {"type": "boolean", "description": "true if solved, false if not"}
                },
                "required": ["is_solved"],
            },
        },
    }


def test_a_function_schema_requires_every_parameter_it_lists() -> None:
    """The shape of every function's definition (the definitions are built once, on import)."""
    status = {"type": "string"}
    assert _schema("Say it.", {"status": status, "why": status}) == {
        "description": "Say it.",
        "parameters": {
            "type": "object",
            "properties": {"status": status, "why": status},
            "required": ["status", "why"],
        },
    }


def test_a_reason_is_a_required_string_added_to_a_copy() -> None:
    with_reason = tool_for("check_answer_status", reason=True)["function"]["parameters"]
    assert with_reason == {
        "type": "object",
        "properties": {
            "answer_status": {"type": "string", "enum": ["Solved", "Unsolved", "Unsure"]},
            "reason": {"type": "string", "description": "explain your answer briefly"},
        },
        "required": ["answer_status", "reason"],
    }
    # the shared definition is left as it was: a later question without a reason has none
    assert FUNCTIONS["check_answer_status"]["parameters"]["required"] == ["answer_status"]
    plain = tool_for("check_answer_status")["function"]["parameters"]
    assert "reason" not in plain["properties"] and plain["required"] == ["answer_status"]


FIELDS: dict[str, dict[str, str]] = {
    "check_answer_status": {"query": "What (is) 2+3?\nTell me.", "answer": "It is 5.\n\nRules:"},
    "parse_answer_status": {"query": "q*", "answer": '{"final_answer": "a"}'},
    "check_task_solvable": {"task": '{"query": "x", "tools": []}'},
    "select_better_answer": {"query": "q", "answer_0": "{}", "answer_1": '{"a": [1]}'},
    "check_solve_query": {"query": "q", "final_answer": "line one\nline two"},
    "parse_answer_details": {"answer_details": "[{}]"},
    "select_best_final_answer": {"query": "q", "final_answers": '["a", "b"]'},
}


@pytest.mark.parametrize("function", sorted(FIELDS))
def test_every_prompt_reads_back_into_its_fields(function: str) -> None:
    """Fields with line breaks and regular-expression characters come back as written; a prompt
    of another function, or with text after it, is not this function's prompt."""
    fields = FIELDS[function]
    prompt = prompt_for(function, **fields)
    for value in fields.values():
        assert value in prompt
    assert prompt_fields(function, prompt) == fields
    assert prompt_fields(function, prompt + "\nand more") is None
    other = next(f for f in sorted(FIELDS) if f != function)
    assert prompt_fields(function, prompt_for(other, **FIELDS[other])) is None


def test_an_unknown_function_has_no_prompt_fields() -> None:
    assert prompt_fields("no_such_function", "anything") is None


def test_the_better_answer_fields_show_the_first_answer_as_answer_0() -> None:
    first: dict[str, Any] = {"final_answer": "Zürich"}
    second: dict[str, Any] = {"final_answer": "Genève", "total_steps": 2}
    assert better_fields("which?", first, second) == {
        "query": "which?",
        "answer_0": '{"final_answer": "Zürich"}',
        "answer_1": '{"final_answer": "Genève", "total_steps": 2}',
    }
    assert json.loads(better_fields("q", first, second)["answer_1"]) == second


@pytest.mark.parametrize(
    ("function", "args", "expected"),
    [
        ("check_answer_status", {"answer_status": "Unsure", "reason": "r"}, "same"),
        ("parse_answer_status", {"answer_status": "Unsolved"}, "same"),
        ("parse_answer_status", {"answer_status": "unsolved"}, None),
        ("check_task_solvable", {"task_status": "Unsolvable"}, "same"),
        ("check_task_solvable", {"task_status": "Solved"}, None),
        ("check_task_solvable", {}, None),
        ("select_better_answer", {"index": 0}, {"index": 0}),
        ("select_better_answer", {"index": " 1 ", "reason": "r"}, {"index": 1, "reason": "r"}),
        ("select_better_answer", {"index": 0.5}, None),
        ("select_better_answer", {"index": -1}, None),
        ("select_better_answer", {"index": "one"}, None),
        ("select_better_answer", {"index": None}, None),
        ("select_better_answer", {"index": [1]}, None),
        ("select_better_answer", {}, None),
        ("select_best_final_answer", {"best_answer_index": 0}, {"best_answer_index": 0}),
        ("select_best_final_answer", {"best_answer_index": 2}, None),  # 2 choices by default
        ("select_best_final_answer", {"best_answer_index": False}, None),
        ("check_solve_query", {"is_solved": False}, "same"),
        ("check_solve_query", {"is_solved": 1}, None),
        (
            "parse_answer_details",
            {"succeed_tool_calling": "3", "used_tool_types": 2.0},
            {"succeed_tool_calling": 3, "used_tool_types": 2},
        ),
        (
            "parse_answer_details",
            {"succeed_tool_calling": 0, "used_tool_types": 0},
            {"succeed_tool_calling": 0, "used_tool_types": 0},
        ),
        ("parse_answer_details", {"succeed_tool_calling": -1, "used_tool_types": 1}, None),
        ("parse_answer_details", {"succeed_tool_calling": 1, "used_tool_types": -1}, None),
        ("parse_answer_details", {"succeed_tool_calling": 1, "used_tool_types": True}, None),
        ("parse_answer_details", {"succeed_tool_calling": 1}, None),
    ],
)
def test_which_replies_answer_the_question(
    function: str, args: dict[str, Any], expected: object
) -> None:
    assert valid_reply(function, args) == (args if expected == "same" else expected)


def test_the_best_answer_index_is_checked_against_the_list_length() -> None:
    assert valid_reply("select_best_final_answer", {"best_answer_index": "4"}, choices=5) == {
        "best_answer_index": 4
    }
    assert valid_reply("select_best_final_answer", {"best_answer_index": 5}, choices=5) is None


def test_an_unknown_function_is_an_error_naming_it() -> None:
    with pytest.raises(KeyError, match="unknown judge function 'ask_anything'"):
        valid_reply("ask_anything", {})
