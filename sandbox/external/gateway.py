"""The HTTP side of one external episode: the routes under ``/e/<token>`` and their server.

``episode_server(scope)`` serves one episode on ``127.0.0.1`` (an ephemeral port, uvicorn in
this event loop) for as long as the ``async with`` lasts, and yields the ``EpisodeUrls`` the
agent is given. Every route sits under a random per-episode token, so nothing else on the
machine (a stray process on a reused port) lands in this episode; once the agent's command is
started, only connections from its own processes are answered (``sandbox.external.peer``: the
token is in the agent's environment, which another episode's agent could read), and once the
episode is over no route answers (403 and the refusal's status):

=====================================  ==========================================================
``POST /e/<t>/v1/chat/completions``    the model proxy (``sandbox.external.proxy``)
``GET  /e/<t>/v1/models``              the model the proxy answers with
``POST /e/<t>/call``                   a tool call by name: ``{"name", "arguments", "id"?}``
``POST /e/<t>/reply``                  in a conversation, a reply to the user: ``{"message"}``,
                                       answered ``{"user", "signal", "reveal", "tools"}``
``/e/<t>/mcp``                         the tools over MCP (``sandbox.external.mcp_tools``)
``/e/<t>/...``                         anything else: the suite's REST routes
                                       (``/tools/{tool}/{api}``, ``/api/...``, ``/virtual``,
                                       ``/health``, ``/tools``...), forwarded in the scope
=====================================  ==========================================================

The server never takes the process's signals (the run handles Ctrl-C and SIGTERM and then
stops it), and stopping it does not wait for the agent's connections. A bug or a harness error
raised by a route is answered 500 and kept for the episode to raise (``EpisodeScope.fail``).
Imports uvicorn, Starlette and the MCP SDK (only when an external episode runs).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import uvicorn
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from sandbox.external.mcp_tools import episode_mcp
from sandbox.external.peer import EpisodeProcesses
from sandbox.external.proxy import (
    NO_RETRY,
    BadRequest,
    error_body,
    include_usage,
    json_body,
    model_request,
    models_list,
    sse_events,
    stream_chunks,
)
from sandbox.external.scope import EpisodeScope, Refusal

__all__ = ["EpisodeGateway", "EpisodeUrls", "episode_server"]

HOST = "127.0.0.1"
_JSON = "application/json"
CHAT_API_ONLY = (
    "this proxy serves the Chat Completions API (POST {base}/chat/completions) and "
    "GET {base}/models; point the client at the Chat Completions API (the OpenAI Agents SDK: "
    "set_default_openai_api('chat_completions'))"
)


@dataclass(frozen=True)
class EpisodeUrls:
    """Where one episode is served."""

    base: str
    """``http://127.0.0.1:<port>/e/<token>``: the tool scope (``SANDBOX_TOOLS_URL``)."""

    def marker(self) -> bytes:
        """What only this episode's processes hold in their environment (its token)."""
        return f"SANDBOX_TOOLS_URL={self.base}\0".encode()

    def environment(self) -> dict[str, str]:
        """The variables the agent's process gets."""
        return {
            "OPENAI_BASE_URL": f"{self.base}/v1",
            "OPENAI_API_BASE": f"{self.base}/v1",
            "OPENAI_API_KEY": "sandbox-episode",
            "SANDBOX_TOOLS_URL": self.base,
            "SANDBOX_MCP_URL": f"{self.base}/mcp",
        }


class EpisodeGateway:
    """The ASGI app of one episode (see the module docstring)."""

    def __init__(self, episode: EpisodeScope, token: str, mcp: ASGIApp) -> None:
        self.episode = episode
        self.prefix = f"/e/{token}"
        self.mcp = mcp

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        if path != self.prefix and not path.startswith(self.prefix + "/"):
            message = "no such episode here (a wrong token, or an episode that is over)"
            await _json(404, {"error": message, "response": ""})(scope, receive, send)
            return
        sub = path[len(self.prefix) :] or "/"
        refused = self._refused(sub, scope)
        if refused is not None:
            await refused(scope, receive, send)
            return
        try:
            response = await self._route(sub, scope, receive, send)
        except Exception as e:  # a bug or a harness error: the episode raises it
            self.episode.fail(e)
            message = f"the sandbox failed: {type(e).__name__}: {e}"
            response = _json(500, error_body(500, "sandbox_error", message), NO_RETRY)
        if response is not None:
            await response(scope, receive, send)

    def _refused(self, sub: str, scope: Scope) -> Response | None:
        """The answer to a request this episode does not serve at all: one from a process that
        is not its agent's (``sandbox.external.peer``), or any request once it is over (its
        tools, the suite's routes, the model list: nothing answers after the end)."""
        agent = self.episode.agent
        if agent is not None and not _from(agent, scope):
            refusal = Refusal(
                403,
                "not_the_agent",
                "this episode answers only its own agent's processes (a request from another "
                "process, or another episode's agent, is refused)",
            )
        elif self.episode.over:
            refusal = self.episode.refusal()
        else:
            return None
        if sub.startswith("/v1/") or sub == "/v1":
            body = error_body(refusal.status, refusal.code, refusal.message)
            return _json(refusal.status, body, NO_RETRY)
        if sub == "/reply":  # as the route itself refuses
            return _json(refusal.status, {"error": refusal.message, "code": refusal.code})
        return _json(refusal.status, {"error": refusal.message, "response": ""})

    async def _route(self, sub: str, scope: Scope, receive: Receive, send: Send) -> Any:
        method = scope["method"]
        if sub == "/mcp" or sub.startswith("/mcp/"):
            await self.mcp(scope, receive, send)
            return None
        request = Request(scope, receive)
        if sub.startswith("/v1/") or sub == "/v1":
            return await self._model_route(sub, method, request)
        if sub == "/call" and method == "POST":
            return await self._call(request)
        if sub == "/reply" and method == "POST":
            return await self._reply(request)
        return await self._forward(sub, method, request)

    async def _model_route(self, sub: str, method: str, request: Request) -> Response:
        base = f"{self.prefix}/v1"
        if sub == "/v1/chat/completions" and method == "POST":
            return await self._complete(request)
        if sub == "/v1/models" and method == "GET":
            return _json(200, models_list(self.episode.model.name))
        message = CHAT_API_ONLY.format(base=base)
        return _json(404, error_body(404, "unknown_route", message), NO_RETRY)

    async def _complete(self, request: Request) -> Response:
        body = json_body(await request.body())
        if isinstance(body, BadRequest):
            return _bad(body)
        wanted = model_request(body)
        if isinstance(wanted, BadRequest):
            return _bad(wanted)
        stream = body.get("stream") is True
        model = body.get("model") if isinstance(body.get("model"), str) else None
        answer = await self.episode.complete(wanted, model=model, stream=stream)
        if isinstance(answer, Refusal):
            body = error_body(answer.status, answer.code, answer.message)
            return _json(answer.status, body, NO_RETRY)
        if stream:
            chunks = stream_chunks(answer, include_usage=include_usage(body))
            return StreamingResponse(_iterate(chunks), media_type="text/event-stream")
        return _json(200, answer)

    async def _call(self, request: Request) -> Response:
        body = json_body(await request.body())
        if isinstance(body, BadRequest):
            return _json(400, {"error": body.message, "response": ""})
        name = body.get("name") if isinstance(body, dict) else None
        if not isinstance(name, str):
            message = 'POST /call takes {"name": <a function name>, "arguments": {...}}'
            return _json(400, {"error": message, "response": ""})
        call_id = body.get("id")
        answer = await self.episode.call(
            name, _arguments(body.get("arguments")), call_id if isinstance(call_id, str) else None
        )
        status = answer.refusal.status if answer.refusal is not None else 200
        headers = {"x-sandbox-provenance": answer.provenance} if answer.provenance else {}
        return Response(answer.text, status, headers=headers, media_type=_JSON)

    async def _reply(self, request: Request) -> Response:
        body = json_body(await request.body())  # a body 100,000 deep is a 400, as for /call
        if isinstance(body, BadRequest):
            return _json(400, {"error": body.message, "code": "invalid"})
        message = body.get("message") if isinstance(body, dict) else None
        if not isinstance(message, str):
            usage = 'POST /reply takes {"message": <what the agent says to the user>}'
            return _json(400, {"error": usage, "code": "invalid"})
        answer = await self.episode.reply(message)
        if isinstance(answer, Refusal):
            return _json(answer.status, {"error": answer.message, "code": answer.code})
        return _json(200, answer.body())

    async def _forward(self, sub: str, method: str, request: Request) -> Response:
        answer = await self.episode.forward(
            method,
            sub,
            query=request.url.query,
            content=await request.body(),
            content_type=request.headers.get("content-type"),
        )
        if isinstance(answer, Refusal):
            return _json(answer.status, {"error": answer.message, "response": ""})
        return Response(answer.body, answer.status, headers=dict(answer.headers))


def _from(agent: EpisodeProcesses, scope: Scope) -> bool:
    """Whether the request's connection was made by one of the agent's processes."""
    client, server = scope.get("client"), scope.get("server")
    if not client or not server:
        return False
    return agent.connected(int(client[1]), int(server[1]))


def _arguments(value: Any) -> str:
    """``/call``'s arguments as the raw text a model would have written."""
    if value is None:
        return "{}"
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _json(status: int, body: Any, headers: dict[str, str] | None = None) -> Response:
    return JSONResponse(body, status, headers=headers)


def _bad(bad: BadRequest) -> Response:
    return _json(400, error_body(400, "invalid_request", bad.message, bad.param), NO_RETRY)


def _iterate(chunks: list[dict[str, Any]]) -> Iterator[bytes]:
    yield from sse_events(chunks)


class _EpisodeServer(uvicorn.Server):
    """uvicorn that leaves the process's signals to the run (which stops it)."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


@contextlib.asynccontextmanager
async def episode_server(episode: EpisodeScope) -> AsyncIterator[EpisodeUrls]:
    """Serve ``episode`` on 127.0.0.1 for the block (see the module docstring)."""
    token = secrets.token_urlsafe(16)
    mcp_app, manager = episode_mcp(episode)
    app = EpisodeGateway(episode, token, mcp_app)
    # IPPROTO_TCP spelled out: asyncio sets TCP_NODELAY on the accepted connections only when
    # the listening socket says it is TCP (proto 0 left Nagle on: 40 ms per keep-alive answer)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((HOST, 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        host=HOST,
        port=port,
        lifespan="off",
        log_level="warning",
        access_log=False,
        ws="none",
        timeout_graceful_shutdown=1,
    )
    server = _EpisodeServer(config)
    async with manager.run():
        task = asyncio.ensure_future(server.serve(sockets=[sock]))
        try:
            while not server.started:
                if task.done():
                    task.result()  # start-up failed: raise it
                    raise RuntimeError("the episode's server stopped before it started")
                await asyncio.sleep(0.005)
            yield EpisodeUrls(f"http://{HOST}:{port}{app.prefix}")
        finally:
            _stop(server, task)
            sock.close()
            with contextlib.suppress(BaseException):
                await task


def _stop(server: uvicorn.Server, task: asyncio.Future[None]) -> None:
    """Stop serving at once: no new connection, the open ones closed (the agent is gone or
    being stopped), without uvicorn's graceful shutdown and its pauses (up to 0.2 s)."""
    server.should_exit = server.force_exit = True
    task.cancel()
    for listener in server.servers:
        listener.close()
    for connection in list(server.server_state.connections):
        connection.shutdown()
