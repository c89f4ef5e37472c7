"""MCP over stdio that answers every line: the SDK's stdio transport, with what it leaves out.

The official SDK's ``stdio_server`` reads one JSON-RPC message per line and hands the server
whatever it cannot parse as an exception, which the server drops: the client waits forever. And
when stdin closes, the server stops at once, cancelling the requests still in flight, which get
no answer. ``serve_lines(server, ...)`` runs an SDK server over stdio with two more rules, the
ones the SDK's own streamable-HTTP transport follows:

- a line that is not JSON is answered with JSON-RPC error -32700 (parse error, ``id: null``);
  JSON that is not one JSON-RPC message (a batch array, which MCP no longer allows, or an object
  without a valid envelope, or a request whose ``id`` is not a string or an integer, which the SDK
  would take for a notification) with -32600 (invalid request), with the request's ``id`` when
  it has a usable one; blank lines are skipped. The connection stays usable.
- when stdin closes, requests already received are answered before the server stops, for up to
  ``drain`` seconds; any still unanswered then gets error -32603 saying so (a request the
  client cancelled with ``notifications/cancelled`` is not waited for: it gets no answer, as
  MCP says).

stdout carries protocol messages only (the SDK's stdout guard is kept); logs go to stderr.
Imports the MCP SDK only.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import AsyncIterator
from types import TracebackType
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp.types import (
    INTERNAL_ERROR,
    INVALID_REQUEST,
    PARSE_ERROR,
    ErrorData,
    JSONRPCError,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError

__all__ = ["DEFAULT_DRAIN", "serve_lines"]

DEFAULT_DRAIN = 30.0
"""Seconds the requests in flight when stdin closes have to be answered."""

_ONE_MESSAGE = (
    "expected one JSON-RPC request, notification or response object per line (MCP does not "
    "take batches)"
)

RequestId = str | int


class _Pending:
    """The requests received and not answered yet, and the ones answered (never twice)."""

    def __init__(self) -> None:
        self.open: set[RequestId] = set()
        self.answered: set[RequestId] = set()
        self.changed = anyio.Event()

    def received(self, request_id: RequestId) -> None:
        self.open.add(request_id)

    def settle(self, request_id: RequestId) -> None:
        """Mark a request answered: call it once its answer is on its way out (the SDK's writer
        has it), since the server stops, cancelling what it still holds, when none is open."""
        self.open.discard(request_id)
        self.answered.add(request_id)
        self.changed.set()
        self.changed = anyio.Event()

    def forget(self, request_id: RequestId) -> None:
        """A request the client cancelled: nothing to wait for."""
        self.open.discard(request_id)
        self.changed.set()
        self.changed = anyio.Event()

    async def drained(self, seconds: float) -> list[RequestId]:
        """Wait until every open request is answered, at most ``seconds``; the ones left."""
        with anyio.move_on_after(seconds):
            while self.open:
                await self.changed.wait()
        return sorted(self.open, key=str)


class _Answers:
    """The server's write stream: passes every message on, noting which requests it answers."""

    def __init__(self, wire: Any, pending: _Pending) -> None:
        self.wire = wire
        self.pending = pending

    async def send(self, item: SessionMessage) -> None:
        message = item.message
        request_id = message.id if isinstance(message, (JSONRPCResponse, JSONRPCError)) else None
        if request_id is not None and request_id in self.pending.answered:
            return  # answered already (a request cancelled when it timed out): never twice
        await self.wire.send(item)
        if request_id is not None:
            self.pending.settle(request_id)

    async def aclose(self) -> None:
        await self.wire.aclose()

    async def __aenter__(self) -> _Answers:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        await self.aclose()
        return None


def _error(request_id: RequestId | None, code: int, message: str) -> SessionMessage:
    return SessionMessage(
        JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=code, message=message))
    )


def _usable_id(value: Any) -> RequestId | None:
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


def _check(line: str) -> tuple[SessionMessage | None, Any]:
    """The error a line gets instead of reaching the server (None: it is a message), and the
    parsed line."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return _error(None, PARSE_ERROR, "Parse error: the line is not JSON"), None
    if not isinstance(data, dict):
        return _error(None, INVALID_REQUEST, f"Invalid request: {_ONE_MESSAGE}"), data
    if "method" in data and "id" in data and _usable_id(data["id"]) is None:
        # the SDK would take it for a notification and never answer
        message = "Invalid request: a request's id must be a string or an integer"
        return _error(None, INVALID_REQUEST, message), data
    try:
        jsonrpc_message_adapter.validate_python(data, by_name=False)
    except (ValidationError, RecursionError):
        request_id = _usable_id(data.get("id"))
        return _error(request_id, INVALID_REQUEST, f"Invalid request: {_ONE_MESSAGE}"), data
    return None, data


class _Lines:
    """stdin as the SDK's transport reads it (an async iterator of lines), keeping from it what
    the server must not see (answered here) and holding end-of-input until the requests in
    flight are answered."""

    def __init__(self, source: Any, pending: _Pending, drain: float) -> None:
        self.source = source
        self.pending = pending
        self.drain = drain
        self.wire: Any = None  # the SDK's write stream, set once the transport is up
        self.ready = anyio.Event()

    def __aiter__(self) -> AsyncIterator[str]:
        return self._lines()

    async def _lines(self) -> AsyncIterator[str]:
        await self.ready.wait()
        async for line in self.source:
            if not line.strip():
                continue
            refused, data = _check(line)
            if refused is not None:
                await self.wire.send(refused)
                continue
            self._note(data)
            yield line
        for request_id in await self.pending.drained(self.drain):
            if request_id not in self.pending.answered:
                message = f"stdin closed and the request did not finish within {self.drain:g}s"
                await self.wire.send(_error(request_id, INTERNAL_ERROR, message))
                self.pending.settle(request_id)

    def _note(self, data: dict[str, Any]) -> None:
        request_id = _usable_id(data.get("id"))
        if "method" in data and request_id is not None:
            self.pending.received(request_id)
        elif data.get("method") == "notifications/cancelled":
            cancelled = _usable_id((data.get("params") or {}).get("requestId"))
            if cancelled is not None:
                self.pending.forget(cancelled)


async def serve_lines(server: Any, *, drain: float = DEFAULT_DRAIN) -> None:
    """Run an SDK low-level ``Server`` over this process's stdin and stdout (see the module
    docstring) until stdin closes and the requests in flight are answered."""
    text = io.TextIOWrapper(sys.stdin.buffer, encoding="utf-8", errors="replace")
    pending = _Pending()
    lines = _Lines(anyio.wrap_file(text), pending, drain)
    try:
        async with stdio_server(stdin=lines) as (read, write):  # type: ignore[arg-type]
            lines.wire = write
            lines.ready.set()
            answers = _Answers(write, pending)
            await server.run(read, answers, server.create_initialization_options())
    finally:
        text.detach()  # sys.stdin's buffer is not ours to close
