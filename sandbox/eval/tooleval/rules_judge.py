"""``rules-judge``: an offline judge that answers ToolEval's functions from the task's checks.

Not an LLM. It is an OpenAI-compatible chat endpoint served in process (an HTTP transport of
the client library the ``openai`` package uses), so ``--judge rules-judge`` goes through the
same code as a real judge: ``Judge.ask`` sends ToolEval's prompt with a forced ``tool_choice``,
the ``OpenAICompatModel`` client posts it, and the endpoint answers with a call of the forced
function. The endpoint reads the question back from the prompt (``functions.prompt_fields``),
finds the task by its query among the suite's tasks it was given, and decides:

==============================  ===========================================================
function                        answer
==============================  ===========================================================
``check_answer_status``,        ``Unsolved`` for an empty answer; with checks, ``Solved`` when
``parse_answer_status``         all pass, else ``Unsolved``; without checks, ``Solved`` for an
                                unsolvable task whose answer says it cannot be done, else
                                ``Unsure`` (rules cannot tell); ``Unsure`` for an unknown query
``check_task_solvable``         the task's ``solvable``
``select_better_answer``        the answer with the better verdict (Solved, Unsure, Unsolved),
                                then the one with fewer steps, then answer 0 (so alternating
                                rounds make an undecided pair a tie)
``check_solve_query``           ``is_solved``: the verdict is ``Solved``
``parse_answer_details``        tool calls whose response holds no error, distinct tool names
``select_best_final_answer``    the first ``Solved`` answer, else 0
==============================  ===========================================================

Every output names it as ``rules-judge (rules from the task's checks, not an LLM)``
(``judge.judge_text``: its ``JudgeUsage.kind`` is ``rules``). It costs nothing and keeps no cache.
May import ``eval`` modules and ``agents`` (the client).
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterable, Sequence
from typing import Any

from mock_tools.models import Task
from sandbox.eval.checks import all_pass, run_checks
from sandbox.eval.judge import RULES_JUDGE
from sandbox.eval.pass_rate import states_cannot_do
from sandbox.eval.tooleval.answer import finish_text
from sandbox.eval.tooleval.functions import prompt_fields

__all__ = ["RULES_JUDGE", "RulesJudgeEndpoint", "rules_judge"]

BASE_URL = "http://rules-judge.invalid/v1"
"""Never resolved: requests go to the in-process transport."""

_RANK = {"Solved": 2, "Unsure": 1, "Unsolved": 0}


def _norm(text: str) -> str:
    return " ".join(text.split())


class RulesJudgeEndpoint:
    """The answers (see the module doc), as OpenAI chat completions."""

    def __init__(self, tasks: Iterable[Task]) -> None:
        self._by_query: dict[str, list[Task]] = {}
        for task in tasks:
            self._by_query.setdefault(_norm(task.query), []).append(task)

    def task(self, query: str) -> Task | None:
        """The task asked about: one task of that query (None when unknown or ambiguous)."""
        found = self._by_query.get(_norm(query), [])
        return found[0] if len(found) == 1 else None

    def verdict(self, query: str, final_answer: str) -> tuple[str, str]:
        """``(status, why)`` of a final answer (the ``Finish`` arguments, or plain text)."""
        text = finish_text(final_answer).strip()
        task = self.task(query)
        if not text:
            return "Unsolved", "empty final answer"
        if task is None:
            return "Unsure", "the query is not a task of the suite"
        if task.checks:
            results = run_checks(text, task.checks)
            if all_pass(results):
                return "Solved", "all checks pass"
            failed = "; ".join(f"{r.kind}: {r.detail}" for r in results if not r.passed)
            return "Unsolved", f"failed checks: {failed}"
        if not task.solvable and states_cannot_do(text):
            return "Solved", "explains that the task cannot be done"
        return "Unsure", "no checks to decide by"

    def decide(self, function: str, fields: dict[str, str]) -> dict[str, Any]:
        """The arguments of ``function``'s answer (a ``reason`` included)."""
        if function in ("check_answer_status", "parse_answer_status"):
            final = fields["answer"]
            if function == "parse_answer_status":
                final = str(_json(final, {}).get("final_answer") or "")
            status, why = self.verdict(fields["query"], final)
            return {"answer_status": status, "reason": why}
        if function == "check_task_solvable":
            task = self.task(str(_json(fields["task"], {}).get("query") or ""))
            status = "Unsure" if task is None else "Solvable" if task.solvable else "Unsolvable"
            return {"task_status": status, "reason": "the task's solvable flag"}
        if function == "select_better_answer":
            answers = [_json(fields["answer_0"], {}), _json(fields["answer_1"], {})]
            return {"index": self._better(fields["query"], answers), "reason": "verdict, steps"}
        if function == "check_solve_query":
            status, why = self.verdict(fields["query"], fields["final_answer"])
            return {"is_solved": status == "Solved", "reason": why}
        if function == "parse_answer_details":
            ok, names = _tool_counts(_json(fields["answer_details"], []))
            return {"succeed_tool_calling": ok, "used_tool_types": names}
        if function == "select_best_final_answer":
            finals = _json(fields["final_answers"], [])
            statuses = [self.verdict(fields["query"], str(f))[0] for f in finals]
            best = statuses.index("Solved") if "Solved" in statuses else 0
            return {"best_answer_index": best, "reason": "the first answer the checks accept"}
        raise KeyError(function)

    def _better(self, query: str, answers: Sequence[dict[str, Any]]) -> int:
        keys = [
            (
                _RANK[self.verdict(query, str(a.get("final_answer") or ""))[0]],
                -int(a.get("total_steps") or 0),
            )
            for a in answers
        ]
        return 1 if keys[1] > keys[0] else 0

    def complete(self, body: dict[str, Any]) -> dict[str, Any]:
        """The completion answering one chat request (ToolEval's single-question shape)."""
        choice = body.get("tool_choice")
        function = choice["function"]["name"] if isinstance(choice, dict) else None
        messages = body.get("messages") or []
        prompt = str(messages[-1].get("content") or "") if messages else ""
        fields = prompt_fields(function, prompt) if function else None
        if function is None or fields is None:
            message: dict[str, Any] = {"role": "assistant", "content": "I answer ToolEval only."}
        else:
            args = json.dumps(self.decide(function, fields), ensure_ascii=False)
            call = {"name": function, "arguments": args}
            message = {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"id": "call_0", "type": "function", "function": call}],
            }
        return {
            "id": "rules-judge",
            "object": "chat.completion",
            "created": 0,
            "model": RULES_JUDGE,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
        }


def _json(text: str, default: Any) -> Any:
    try:
        value = json.loads(text)
    except ValueError:
        return default
    return value if isinstance(value, type(default)) else default


def _tool_counts(details: list[Any]) -> tuple[int, int]:
    """Tool calls of an answer chain whose response holds no error, and distinct names."""
    ok, names = 0, set()
    nodes = details
    while nodes and isinstance(nodes[0], dict):
        node = nodes[0]
        message = node.get("message")
        if node.get("role") == "tool" and isinstance(message, dict):
            name = str(message.get("name") or "")
            if name and name != "Finish":
                names.add(name)
                error = _json(str(message.get("response") or ""), {}).get("error")
                ok += not error
        nodes = node.get("next") or []
    return ok, len(names)


def _http_library() -> Any:
    """The HTTP library the ``openai`` package sends through (its client's base class's)."""
    import openai

    base = next(c for c in openai.DefaultAsyncHttpxClient.__mro__ if c.__name__ == "AsyncClient")
    return importlib.import_module(base.__module__.partition(".")[0])


def rules_judge(tasks: Iterable[Task]) -> Any:
    """An ``OpenAICompatModel`` named ``rules-judge`` whose endpoint is the rules, in process."""
    from agents.models.openai_compat import OpenAICompatModel  # openai: only when judging
    from agents.models.retry import RetryPolicy

    endpoint = RulesJudgeEndpoint(tasks)
    http = _http_library()

    async def handle(request: Any) -> Any:
        if request.method == "GET" and request.url.path.endswith("/models"):
            return http.Response(200, json={"object": "list", "data": [{"id": RULES_JUDGE}]})
        body = json.loads(await request.aread())
        return http.Response(200, json=endpoint.complete(body))

    client = http.AsyncClient(transport=http.MockTransport(handle))
    no_retries = RetryPolicy(max_retries=0)
    return OpenAICompatModel(
        RULES_JUDGE, BASE_URL, name=RULES_JUDGE, retry=no_retries, http_client=client
    )
