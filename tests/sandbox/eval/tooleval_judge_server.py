"""A fake OpenAI-compatible judge that answers ToolEval's functions, over real HTTP.

It runs ``tests.agents.models.openai_server.ScriptedOpenAIServer`` (uvicorn on 127.0.0.1) with a
policy that reads each request as the ``toolbench`` judge sends it: the forced function
(``tool_choice``), the one user message, and the ``seed`` (the sample or round index). It replies
with a call of that function, as a real judge under a forced ``tool_choice`` does.

The verdicts are scripted by markers the tests put in final answers:

- ``statuses[marker]``: the ``check_answer_status`` verdict per sample (indexed by seed; one
  value for all samples when the list has one entry); default ``Solved``;
- ``second_looks[marker]``: the ``parse_answer_status`` verdict per sample, the same way;
- ``select_better_answer``: the answer holding ``GOOD`` wins; without one, ``index`` 0 (a judge
  biased towards the first position);
- ``check_solve_query``: false when the final answer holds ``NOT-SOLVED``;
- ``details[marker]``: the ``parse_answer_details`` counts ``(succeed_tool_calling,
  used_tool_types)`` of answers whose steps hold the marker; default ``(1, 1)``;
- ``garbage``: markers whose every reply is unparseable (plain text "not solved", no call).

``calls`` counts the requests per function; ``log`` keeps ``(function, seed, prompt)``;
``judge()`` is a ``Judge`` on this server. The fixtures ``judge_server`` (cleared for each test)
and ``judge_server_session`` are in this folder's conftest.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from agents.models.openai_compat import OpenAICompatModel
from agents.models.retry import RetryPolicy
from sandbox.eval.judge import Judge
from tests.agents.models.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    text_reply,
    tool_call_reply,
)

__all__ = ["ToolEvalJudgeServer"]


class ToolEvalJudgeServer(ScriptedOpenAIServer):
    def __init__(self) -> None:
        super().__init__(models=["judge"])
        self.statuses: dict[str, list[str]] = {}
        self.second_looks: dict[str, list[str]] = {}
        self.garbage: set[str] = set()
        self.details: dict[str, tuple[int, int]] = {}
        self.calls: Counter[str] = Counter()
        self.log: list[tuple[str, int, str]] = []
        self.default = self.answer

    def clear(self) -> None:
        """Forget the script and the log (the server keeps running)."""
        self.script.clear()
        self.default = self.answer
        self.statuses.clear()
        self.second_looks.clear()
        self.garbage.clear()
        self.details.clear()
        self.calls.clear()
        self.log.clear()
        self.requests.clear()

    def model(self, **kw: Any) -> OpenAICompatModel:
        """A client of this server without the model layer's retries."""
        return OpenAICompatModel(
            "judge", self.base_url, api_key="k", timeout=10, retry=RetryPolicy(max_retries=0), **kw
        )

    def judge(self, **kw: Any) -> Judge:
        return Judge(self.model(), **kw)

    def count(self, function: str) -> int:
        return self.calls[function]

    @staticmethod
    def _pick(table: dict[str, list[str]], text: str, seed: int, default: str) -> str:
        for marker, values in table.items():
            if marker in text:
                return values[seed % len(values)] if len(values) > 1 else values[0]
        return default

    def answer(self, body: dict[str, Any]) -> Reply:
        function = body["tool_choice"]["function"]["name"]
        prompt = body["messages"][-1]["content"]
        seed = int(body.get("seed", 0))
        self.calls[function] += 1
        self.log.append((function, seed, prompt))
        if any(m in prompt for m in self.garbage):
            return text_reply("not solved")
        if function == "check_answer_status":
            answer = prompt.split("Final answer:", 1)[1].split("Rules:", 1)[0]
            status = self._pick(self.statuses, answer, seed, "Solved")
            return tool_call_reply(function, {"answer_status": status, "reason": "scripted"})
        if function == "parse_answer_status":
            status = self._pick(self.second_looks, prompt, seed, "Unsure")
            return tool_call_reply(function, {"answer_status": status, "reason": "looked"})
        if function == "select_better_answer":
            first = prompt.split("Answer 0 (JSON):", 1)[1].split("Answer 1 (JSON):", 1)[0]
            second = prompt.split("Answer 1 (JSON):", 1)[1]
            index = 1 if "GOOD" in second and "GOOD" not in first else 0
            return tool_call_reply(function, {"index": index, "reason": "scripted"})
        if function == "check_solve_query":
            return tool_call_reply(function, {"is_solved": "NOT-SOLVED" not in prompt})
        if function == "parse_answer_details":
            ok, kinds = next((v for m, v in self.details.items() if m in prompt), (1, 1))
            return tool_call_reply(function, {"succeed_tool_calling": ok, "used_tool_types": kinds})
        if function == "select_best_final_answer":
            answers = json.loads(prompt.split("indexed from 0):", 1)[1].split("\n\nCall", 1)[0])
            best = next((i for i, a in enumerate(answers) if "GOOD" in a), 0)
            return tool_call_reply(function, {"best_answer_index": best})
        return text_reply("unknown function")
