"""The judge's functions: ToolEval's function names and argument names, with our own prompts.

ToolEval (StableToolBench / ToolBench ``toolbench/tooleval/``: the default evaluator's
``config.yaml`` and ``template.txt``, ``registered_cls/tooleval.py::function_call``) asks its judge
model one question per request: a single user message, the one function offered, and
``tool_choice`` forcing that function. The reply is read from the call's arguments. These are
the same functions, under the same names, with the same argument names and values, so a judge
fine-tuned or prompted for ToolEval sees the interface it expects; the prompt text is this
project's own.

==========================  =============================================  ======================
function                    arguments of the reply                         used by
==========================  =============================================  ======================
``check_answer_status``     ``answer_status``: Solved | Unsolved | Unsure  pass rate, preference
``parse_answer_status``     ``answer_status`` (the second look)            pass rate, preference
``check_task_solvable``     ``task_status``: Solvable | Unsolvable | Unsure (available, unused)
``select_better_answer``    ``index``: 0 | 1                               preference
``check_solve_query``       ``is_solved``: boolean                         normalized preference
``parse_answer_details``    ``succeed_tool_calling``, ``used_tool_types``  normalized preference
``select_best_final_answer``  ``best_answer_index``: 0-based               normalized preference
==========================  =============================================  ======================

With ``reason=True`` a required string ``reason`` is added to the function's parameters, as
ToolEval's ``return_reason`` does. ``valid_reply`` says whether parsed arguments answer the
question; the judge retries a reply that does not.
Pure data and pure functions; imports nothing from the project.
"""

from __future__ import annotations

import copy
from typing import Any

__all__ = [
    "ANSWER_STATUSES",
    "FUNCTIONS",
    "TASK_STATUSES",
    "prompt_for",
    "tool_for",
    "valid_reply",
]

ANSWER_STATUSES = ("Solved", "Unsolved", "Unsure")
TASK_STATUSES = ("Solvable", "Unsolvable", "Unsure")


def _schema(description: str, properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "description": description,
        "parameters": {"type": "object", "properties": properties, "required": list(properties)},
    }


_STATUS = {"type": "string", "enum": list(ANSWER_STATUSES)}

FUNCTIONS: dict[str, dict[str, Any]] = {
    "check_answer_status": _schema(
        "Judge from the final answer whether it solves the query.", {"answer_status": _STATUS}
    ),
    "parse_answer_status": _schema(
        "Judge from the whole answer (final answer and every step) whether it solves the query.",
        {"answer_status": _STATUS},
    ),
    "check_task_solvable": _schema(
        "Judge whether the task can be solved with the tools it lists.",
        {"task_status": {"type": "string", "enum": list(TASK_STATUSES)}},
    ),
    "select_better_answer": _schema(
        "Pick the better of two answers to the same query.",
        {"index": {"type": "number", "enum": [0, 1], "description": "0 or 1: the better one"}},
    ),
    "check_solve_query": _schema(
        "Judge whether a final answer solves the query.",
        {"is_solved": {"type": "boolean", "description": "true if solved, false if not"}},
    ),
    "parse_answer_details": _schema(
        "Count what the tool steps of an answer achieved.",
        {
            "succeed_tool_calling": {
                "type": "number",
                "description": "how many tool calls returned a response without an error",
            },
            "used_tool_types": {
                "type": "number",
                "description": "how many different tool names were called",
            },
        },
    ),
    "select_best_final_answer": _schema(
        "Pick the best final answer in a list.",
        {"best_answer_index": {"type": "number", "description": "0-based index of the best"}},
    ),
}

_PROMPTS: dict[str, str] = {
    "check_answer_status": """You are checking whether an AI assistant's answer solves a \
user's query.

Query:
{query}

Final answer:
{answer}

Rules:
- An apology, a refusal, or a reply that does not address the query directly is Unsolved.
- A direct reply that answers every part of the query is Solved; one that misses a part, or \
contradicts itself, is Unsolved.
- If the reply is direct but you cannot tell from it alone whether it is right or complete, \
say Unsure.
Call check_answer_status with your verdict.""",
    "parse_answer_status": """You are checking whether an AI assistant solved a user's query. \
You see its whole answer: the final answer and every step it took (tool calls, with their \
responses).

Query:
{query}

Answer (JSON):
{answer}

Rules:
- If every tool call failed or returned errors, the query is Unsolved.
- If the final answer states things the tool responses do not support or contradict, Unsolved.
- If successful tool calls produced what the query asks and the final answer reports it, Solved.
- If you still cannot tell, Unsure.
Call parse_answer_status with your verdict.""",
    "check_task_solvable": """Can this task be solved with the tools it lists?

Task (JSON: the query and the available tools):
{task}

Rules:
- If the query holds invalid information (e.g. an impossible date or id) or misses information \
the tools need, it is Unsolvable.
- If the listed tools are enough to answer it, Solvable.
- If you cannot decide, Unsure.
Call check_task_solvable with your verdict.""",
    "select_better_answer": """Two AI assistants answered the same query with tools. Which \
answer is better?

Query:
{query}

Answer 0 (JSON):
{answer_0}

Answer 1 (JSON):
{answer_1}

Compare first the final answers: the more informative and correct one wins, and a failure \
explained with its reasons beats one that is not. If that does not decide, compare the steps: \
fewer failed or repeated calls, fewer tokens, more progress towards the goal, more exploration \
of the available tools. If nothing decides, choose either.
Call select_better_answer with the index (0 or 1) of the better answer.""",
    "check_solve_query": """Does this final answer solve the query?

Query:
{query}

Final answer:
{final_answer}

Call check_solve_query with is_solved true or false.""",
    "parse_answer_details": """Here are the steps of an AI assistant's answer, as JSON nodes \
(role, message, next). Tool nodes hold the function name, its arguments and its response.

{answer_details}

Count the tool calls whose response holds no error, and the number of different function \
names called. Call parse_answer_details with the two counts.""",
    "select_best_final_answer": """Which final answer answers the query best?

Query:
{query}

Final answers (a JSON list, indexed from 0):
{final_answers}

Call select_best_final_answer with the index of the best one.""",
}


def tool_for(function: str, *, reason: bool = False) -> dict[str, Any]:
    """The ``tools`` entry offering ``function`` alone (with a required ``reason`` if asked)."""
    schema = copy.deepcopy(FUNCTIONS[function])
    if reason:
        schema["parameters"]["properties"]["reason"] = {
            "type": "string",
            "description": "explain your answer briefly",
        }
        schema["parameters"]["required"].append("reason")
    return {"type": "function", "function": {"name": function, **schema}}


def prompt_for(function: str, **fields: str) -> str:
    """The single user message asking ``function``'s question about ``fields``."""
    return _PROMPTS[function].format(**fields)


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return None
    return None


def _index(value: Any, size: int) -> int | None:
    number = _number(value)
    if number is None or number != int(number) or not 0 <= number < size:
        return None
    return int(number)


def valid_reply(function: str, args: dict[str, Any], *, choices: int = 2) -> dict[str, Any] | None:
    """The reply's arguments, normalised, when they answer ``function``'s question; else None.

    Status values must be one of the enum's strings exactly (ToolEval's ``AnswerStatus(x)``
    rejects anything else); indexes must be whole numbers in range (``"1"`` and ``1.0`` are read
    as 1, like ToolEval's ``int()``); ``is_solved`` must be a JSON boolean; counts must be
    non-negative numbers. ``choices`` is the size of ``select_best_final_answer``'s list.
    """
    out = dict(args)
    if function in ("check_answer_status", "parse_answer_status"):
        return out if args.get("answer_status") in ANSWER_STATUSES else None
    if function == "check_task_solvable":
        return out if args.get("task_status") in TASK_STATUSES else None
    if function == "select_better_answer":
        index = _index(args.get("index"), 2)
        return None if index is None else out | {"index": index}
    if function == "select_best_final_answer":
        index = _index(args.get("best_answer_index"), choices)
        return None if index is None else out | {"best_answer_index": index}
    if function == "check_solve_query":
        return out if isinstance(args.get("is_solved"), bool) else None
    if function == "parse_answer_details":
        counts = [_number(args.get(k)) for k in ("succeed_tool_calling", "used_tool_types")]
        if any(c is None or c < 0 for c in counts):
            return None
        return out | {
            "succeed_tool_calling": int(counts[0] or 0),
            "used_tool_types": int(counts[1] or 0),
        }
    raise KeyError(f"unknown judge function {function!r}")
