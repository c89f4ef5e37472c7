"""The judge over real HTTP: an OpenAI-compatible server on 127.0.0.1 scripted by the test."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from outcome_builders import call, task, traj

from agents.models.openai_compat import OpenAICompatModel
from sandbox.eval.judge import (
    Judge,
    majority,
    parse_index,
    parse_status,
    render_trajectory,
)
from sandbox.eval.pass_rate import label_episode
from sandbox.models.cache import RequestCache

# Scripted verdicts, by a marker in the final answer and the request's seed (sample index).
FIRST_LOOK: dict[str, list[str]] = {
    "ANS-SOLVED": ["Solved", "Solved", "Solved"],
    "ANS-MIXED": ["Solved", "Unsolved", "Unsolved"],
    "ANS-SPLIT": ["Solved", "Unsolved", "Unsure"],
    "ANS-UNSURE": ["Unsure", "Unsure", "Solved"],
}
SECOND_LOOK = ["Solved", "Solved", "Unsolved"]


class ScriptedJudgeServer:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        app = FastAPI()

        @app.get("/v1/models")
        async def models() -> dict[str, Any]:
            return {"object": "list", "data": [{"id": "judge", "object": "model"}]}

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> dict[str, Any]:
            body = await request.json()
            self.requests.append(body)
            return _completion(self.reply(body))

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        self._sock = sock
        self._server = uvicorn.Server(
            uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning")
        )
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        user = body["messages"][-1]["content"]
        seed = int(body.get("seed", 0))
        if system.startswith("You compare"):
            # a fair judge picks the GOOD answer; a biased one always picks position 0
            if "BIASED" in user:
                return '{"reason": "first", "index": 0}'
            first = user.split("Answer 0:", 1)[1].split("Answer 1:", 1)[0]
            return f'```json\n{{"reason": "r", "index": {0 if "GOOD" in first else 1}}}\n```'
        if "Trajectory (" in user:
            return f'Verdict: {{"reason": "looked", "answer_status": "{SECOND_LOOK[seed]}"}}'
        for marker, statuses in FIRST_LOOK.items():
            if marker in user:
                return f'{{"reason": "r", "answer_status": "{statuses[seed]}"}}'
        return "I cannot say."

    def __enter__(self) -> ScriptedJudgeServer:
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline:
                raise RuntimeError("judge server did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.should_exit = True
        self._thread.join(timeout=10)
        self._sock.close()


def _completion(content: str) -> dict[str, Any]:
    return {
        "id": "cmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "judge",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


@pytest.fixture(scope="module")
def server() -> Iterator[ScriptedJudgeServer]:
    with ScriptedJudgeServer() as s:
        yield s


def _judge(server: ScriptedJudgeServer, cache: RequestCache | None = None, **kw: Any) -> Judge:
    model = OpenAICompatModel("judge", server.url, api_key="k", timeout=10, max_retries=0)
    return Judge(model, cache=cache, **kw)


def test_parsers() -> None:
    assert parse_status('{"answer_status": "Unsolved"}') == "Unsolved"
    assert parse_status('```json\n{"status": "solved"}\n```') == "Solved"
    assert parse_status("I think it is Unsolved.") == "Unsolved"
    assert parse_status("no idea") == "Unsure"
    assert parse_index('{"index": 1}') == 1
    assert parse_index('noise {"reason": "{x}", "index": "0"} tail') == 0
    assert parse_index("Answer 1 is better") == 1
    assert parse_index("neither") is None
    assert majority(["Solved", "Unsolved", "Solved"]) == "Solved"
    assert majority(["Solved", "Unsolved"]) == "Unsure"
    assert majority([]) == "Unsure"


async def test_majority_voting(server: ScriptedJudgeServer) -> None:
    judge = _judge(server)
    v = await judge.check_answer_status("q", "ANS-MIXED")
    assert (v.status, v.votes) == ("Unsolved", {"Solved": 1, "Unsolved": 2})
    assert (await judge.check_answer_status("q", "ANS-SPLIT")).status == "Unsure"
    assert judge.usage.calls == 6
    assert (judge.usage.prompt_tokens, judge.usage.completion_tokens) == (60, 30)


async def test_unsure_gets_a_second_look_with_the_trajectory(server: ScriptedJudgeServer) -> None:
    judge = _judge(server)
    t = task(query="Add 2 and 3")
    episode = traj(answer="ANS-UNSURE", calls=[[call("add")]])
    base = label_episode(episode, t)
    assert base.method == "none"
    before = len(server.requests)
    judged = await judge.label(episode, t, base)
    sent = server.requests[before:]
    assert len(sent) == 6  # 3 on the answer, 3 with the trajectory
    assert sum("Trajectory (" in r["messages"][-1]["content"] for r in sent) == 3
    assert "add_for_calc" in render_trajectory(episode)
    assert (judged.label, judged.score, judged.method) == ("solved", 1.0, "judge")
    assert "second look" in judged.reason

    direct = await judge.label(traj(answer="ANS-SOLVED"), t, base)
    assert direct.label == "solved" and "answer only" in direct.reason


async def test_select_better_answer_asks_both_orders(server: ScriptedJudgeServer) -> None:
    judge = _judge(server, rounds=2)
    before = len(server.requests)
    assert await judge.select_better_answer("q", "GOOD one", "poor one") == 0
    assert await judge.select_better_answer("q", "poor one", "GOOD one") == 1
    sent = server.requests[before : before + 4]
    firsts = [r["messages"][-1]["content"].split("Answer 1:")[0] for r in sent]
    assert sum("GOOD" in f for f in firsts) == 2  # each order asked in each round
    # a judge that always picks position 0 cancels out
    assert await judge.select_better_answer("BIASED", "a", "b") is None


async def test_cached_second_run_makes_no_http_call(
    server: ScriptedJudgeServer, tmp_path: Path
) -> None:
    path = tmp_path / "judge.sqlite"
    first = _judge(server, RequestCache(path))
    v1 = await first.check_answer_status("q", "ANS-MIXED")
    b1 = await first.select_better_answer("q", "GOOD", "bad")
    assert first.usage.calls == 5 and first.usage.cache_hits == 0

    before = len(server.requests)
    second = _judge(server, RequestCache(path))
    assert await second.check_answer_status("q", "ANS-MIXED") == v1
    assert await second.select_better_answer("q", "GOOD", "bad") == b1
    assert len(server.requests) == before
    assert (second.usage.calls, second.usage.cache_hits, second.usage.prompt_tokens) == (0, 5, 0)
