"""A scriptable OpenAI-compatible HTTP server for tests (real uvicorn on 127.0.0.1).

It speaks ``POST /v1/chat/completions`` (text answers, tool calls, usage) and ``GET /v1/models``.
Each chat request takes the next reply from a queue; when the queue is empty it gets the default
reply. A reply is either a ``Reply`` or a function of the request body returning one.

Usage (the server runs in a background thread on a free port)::

    from tests.agents.models.openai_server import (
        ScriptedOpenAIServer, error_reply, finish_reply, text_reply, tool_call_reply,
    )

    with ScriptedOpenAIServer() as server:          # or the ``openai_server`` pytest fixture
        server.push(
            error_reply(429, retry_after=0.05),     # then
            error_reply(500),                       # then
            tool_call_reply("search_for_flights", {"to": "PAR"}, content="Let me search."),
        )
        model = OpenAICompatModel("test-model", server.base_url)
        ...
        server.requests        # the JSON bodies received, in order
        server.request_times   # time.monotonic() of each chat request's arrival

Defaults: a request that offers the ``Finish`` function gets ``Finish(give_answer, "...")``;
any other gets a plain text answer (handy for an LLM judge). Replace with
``server.default = text_reply("Solved")`` or ``server.default = lambda body: ...``.
``slow(reply, seconds)`` delays a reply (to provoke client timeouts); ``server.reset()`` clears
the queue, the request log and the default. ``server.models`` is what ``/v1/models`` lists.

Test modules outside this folder use the fixtures by importing them into their conftest::

    from tests.agents.models.openai_server import openai_server, openai_server_session  # noqa
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, Response

DEFAULT_ANSWER = "This is the scripted default answer."


@dataclass
class Reply:
    """One scripted HTTP answer."""

    status: int = 200
    body: dict[str, Any] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw: str | None = None
    """Sent as the body verbatim instead of ``body`` (a proxy's HTML page, a cut body)."""


Script = Reply | Callable[[dict[str, Any]], Reply]


def _usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def _completion(message: dict[str, Any], finish_reason: str, usage: dict[str, int]) -> Reply:
    return Reply(
        body={
            "id": "chatcmpl-scripted",
            "object": "chat.completion",
            "created": 0,
            "model": "scripted",
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
            "usage": usage,
        }
    )


def text_reply(content: str, *, prompt_tokens: int = 10, completion_tokens: int = 5) -> Reply:
    """A plain assistant message."""
    message = {"role": "assistant", "content": content}
    return _completion(message, "stop", _usage(prompt_tokens, completion_tokens))


def tool_call_reply(
    name: str,
    arguments: dict[str, Any] | str,
    *,
    content: str | None = None,
    call_id: str = "call_0",
    prompt_tokens: int = 10,
    completion_tokens: int = 5,
) -> Reply:
    """An assistant message with one tool call (``arguments`` as a dict or as raw text)."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    message = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": raw}}
        ],
    }
    return _completion(message, "tool_calls", _usage(prompt_tokens, completion_tokens))


def finish_reply(answer: str = DEFAULT_ANSWER, *, return_type: str = "give_answer") -> Reply:
    """A ToolBench ``Finish`` call."""
    args = {"return_type": return_type, "final_answer": answer}
    return tool_call_reply("Finish", args, content="I can answer now.", call_id="call_finish")


def error_reply(status: int, *, retry_after: float | str | None = None, message: str = "") -> Reply:
    """An OpenAI-style error body with the given status (and ``Retry-After`` if given)."""
    headers = {} if retry_after is None else {"retry-after": str(retry_after)}
    body = {"error": {"message": message or f"scripted HTTP {status}", "type": "scripted"}}
    return Reply(status=status, body=body, headers=headers)


def raw_reply(text: str, *, status: int = 200, content_type: str = "text/html") -> Reply:
    """A body that is not a completion: ``text`` verbatim, as a misbehaving proxy sends it."""
    return Reply(status=status, headers={"content-type": content_type}, raw=text)


def slow(reply: Reply, seconds: float) -> Reply:
    """The same reply, sent after ``seconds``."""
    return replace(reply, delay=seconds)


def default_reply(body: dict[str, Any]) -> Reply:
    """Finish(give_answer) when ``Finish`` is offered, a plain text answer otherwise."""
    names = {t.get("function", {}).get("name") for t in body.get("tools") or []}
    return finish_reply() if "Finish" in names else text_reply(DEFAULT_ANSWER)


class ScriptedOpenAIServer:
    """See the module docstring. Thread-safe enough for tests: the queue is a ``deque``."""

    def __init__(self, *, models: list[str] | None = None) -> None:
        self.models = list(models or ["scripted-model"])
        self.script: deque[Script] = deque()
        self.default: Script = default_reply
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        self.model_list_calls = 0
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- scripting ---------------------------------------------------------------------------

    def push(self, *replies: Script) -> None:
        self.script.extend(replies)

    def reset(self) -> None:
        self.script.clear()
        self.default = default_reply
        self.requests.clear()
        self.request_times.clear()
        self.model_list_calls = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # -- the app -----------------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> Reply:
        item = self.script.popleft() if self.script else self.default
        return item(body) if callable(item) else item

    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            self.request_times.append(time.monotonic())
            reply = self._next(body)
            if reply.delay:
                await asyncio.sleep(reply.delay)
            if reply.raw is not None:
                return Response(reply.raw, status_code=reply.status, headers=reply.headers)
            return JSONResponse(reply.body, status_code=reply.status, headers=reply.headers)

        @app.get("/v1/models")
        async def models() -> dict[str, Any]:
            self.model_list_calls += 1
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "test"} for m in self.models
            ]
            return {"object": "list", "data": data}

        return app

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> ScriptedOpenAIServer:
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self.app(), log_level="warning", lifespan="off", timeout_graceful_shutdown=1
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [sock]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the scripted OpenAI server did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=5)
        self._server = None
        self._thread = None

    def __enter__(self) -> ScriptedOpenAIServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def scripted_alias(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """The ``scripted`` model alias (a ``models.yaml`` in ``folder``, ``SANDBOX_MODELS_FILE``):
    the endpoint a test starts (``SANDBOX_SCRIPTED_BASE_URL``), retried twice 10 ms apart, so a
    body that stays broken costs milliseconds, not the default's backoff."""
    models = folder / "models.yaml"
    models.write_text(
        "models:\n  scripted:\n    kind: openai\n    model: scripted\n"
        "    base_url: http://127.0.0.1:9/v1\n"
        "    retry: {max_retries: 2, initial: 0.01, jitter: 0}\n"
    )
    monkeypatch.setenv("SANDBOX_MODELS_FILE", str(models))


def free_port() -> int:
    """A port nothing listens on (bound then released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="session")
def openai_server_session() -> Iterator[ScriptedOpenAIServer]:
    """One server for the whole session (starting uvicorn costs a little)."""
    with ScriptedOpenAIServer() as server:
        yield server


@pytest.fixture
def openai_server(openai_server_session: ScriptedOpenAIServer) -> ScriptedOpenAIServer:
    """The session's server, reset: empty queue, empty log, default replies."""
    openai_server_session.reset()
    return openai_server_session
