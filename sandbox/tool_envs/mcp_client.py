"""A connection to an MCP server, with bounded start-up and calls, for the MCP tool env.

``McpTarget.parse`` reads ``--mcp-server``: an ``http(s)://`` URL (streamable HTTP) or
``stdio:COMMAND ARGS`` (a subprocess spoken to over stdin/stdout; it gets the MCP SDK's default
environment, so pass more with ``stdio:env KEY=VALUE COMMAND``). ``McpConnection.open`` connects
with the official SDK's ``Client`` and lists every tool (all pages) within ``startup_timeout``;
a server that does not start, answer or list is a ``ConfigError`` saying which and how to check
(with the last line a stdio server wrote on its stderr: ``stderr_tail``).

The SDK client lives in one background task from open to close (its task groups must be entered
and left by the same task), so episodes running in other tasks share it. ``call`` is bounded by
``call_timeout``; a timeout, a lost connection or a JSON-RPC error is an ``McpCallError`` with a
``kind`` (``timeout``, ``connection``, ``protocol``), never an answer of the tool. An answer over
``max_reply_bytes`` (``tools.max_reply_bytes``) is not read: a stdio server runs behind a line
cap (``mcp_stdio_cap.py``, which answers such a call with an error of its own), an HTTP server's
JSON bodies are cut off by the HTTP client and its events by the SDK's per-event limit; the call
fails with ``kind`` ``reply_too_large`` (in bounded memory and time: 4 MiB, not 50 MB).
``response_of(result)`` turns a tool result into the mock tools' ``Response``. The SDK is imported
only here and only when a connection is opened. May import ``mock_tools``, ``sandbox.errors``,
``stderr_tail``, ``reply_cap`` and ``mcp_stdio_cap``'s constant.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mock_tools import Response
from mock_tools.json_numbers import finite_json
from sandbox.errors import ConfigError
from sandbox.tool_envs.mcp_stdio_cap import TOO_LARGE_CODE
from sandbox.tool_envs.reply_cap import DEFAULT_MAX_TOOL_REPLY, TOO_LARGE, cap_client
from sandbox.tool_envs.stderr_tail import StderrTail

__all__ = [
    "DEFAULT_CALL_TIMEOUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "McpCallError",
    "McpConnection",
    "McpTarget",
    "response_of",
]

DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 60.0
META_SESSION = "agent-sandbox/session"
"""The ``_meta`` key naming the episode (``mock_tools.mcp_server`` counts occurrences by it)."""
_KINDS = {-32000: "connection", -32001: "timeout"}
RELAY = Path(__file__).with_name("mcp_stdio_cap.py")
"""The line cap a stdio server runs behind (a script: it starts without the project)."""
"""SDK error codes that are not the server's answer: connection closed, request timed out."""


@dataclass(frozen=True)
class McpTarget:
    """Where an MCP server is: a URL, or a command to start."""

    url: str | None = None
    command: tuple[str, ...] = ()

    @classmethod
    def parse(cls, spec: str) -> McpTarget:
        text = spec.strip()
        if text.startswith("stdio:"):
            try:
                argv = shlex.split(text[len("stdio:") :])
            except ValueError as e:
                raise ConfigError(f"--mcp-server {spec!r}: cannot split the command: {e}") from e
            if not argv:
                raise ConfigError("--mcp-server stdio: needs a command, e.g. 'stdio:my-server -v'")
            return cls(command=tuple(argv))
        if text.startswith(("http://", "https://")):
            return cls(url=text)
        raise ConfigError(
            f"--mcp-server {spec!r}: expected an http(s):// URL (streamable HTTP, e.g. "
            "http://127.0.0.1:8765/mcp) or 'stdio:COMMAND ARGS'"
        )

    def describe(self) -> str:
        return self.url or "stdio:" + shlex.join(self.command)

    def hint(self) -> str:
        if self.url is not None:
            return (
                "check that it runs and serves MCP at that path (e.g. `sandbox serve SUITE --mcp` "
                "serves http://127.0.0.1:8765/mcp)"
            )
        return "check that the command starts an MCP server on stdin/stdout (run it by hand)"


class McpCallError(Exception):
    """A call that got no answer from the tool: ``kind`` is timeout, connection or protocol."""

    def __init__(self, message: str, *, kind: str) -> None:
        super().__init__(message)
        self.kind = kind


class McpConnection:
    """One SDK client for a run: the server's name, its tools, and bounded calls."""

    def __init__(
        self,
        target: McpTarget,
        *,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_reply_bytes: int = DEFAULT_MAX_TOOL_REPLY,
    ) -> None:
        self.target = target
        self.call_timeout = call_timeout
        self.max_reply_bytes = max_reply_bytes
        self.server_name = ""
        self.server_version = ""
        self.tools: list[Any] = []
        self._client: Any = None
        self._ready = asyncio.Event()
        self._closing = asyncio.Event()
        self._error: BaseException | None = None
        self._task: asyncio.Task[None] | None = None
        self._stderr: StderrTail | None = None

    @classmethod
    async def open(
        cls,
        target: McpTarget,
        *,
        startup_timeout: float = DEFAULT_STARTUP_TIMEOUT,
        call_timeout: float = DEFAULT_CALL_TIMEOUT,
        max_reply_bytes: int = DEFAULT_MAX_TOOL_REPLY,
    ) -> McpConnection:
        """Connect and list the tools; ``ConfigError`` when the server cannot be used."""
        conn = cls(target, call_timeout=call_timeout, max_reply_bytes=max_reply_bytes)
        conn._task = asyncio.create_task(conn._hold())
        try:
            await asyncio.wait_for(conn._ready.wait(), startup_timeout)
        except asyncio.TimeoutError:
            await conn.aclose()
            raise ConfigError(
                f"the MCP server {target.describe()} did not start and list its tools within "
                f"{startup_timeout:g}s{conn.said()}; {target.hint()}"
            ) from None
        if conn._error is not None:
            error = conn._error
            await conn.aclose()
            raise ConfigError(
                f"cannot use the MCP server {target.describe()}: {_describe(error)}"
                f"{conn.said()}; {target.hint()}"
            ) from None
        return conn

    def said(self) -> str:
        """What a stdio server that failed wrote last on its stderr, as a clause (or "")."""
        line = self._stderr.last_line() if self._stderr is not None else ""
        return f" (its stderr ends: {line})" if line else ""

    async def _hold(self) -> None:
        """The client's whole life, in one task: connect, list, wait for ``aclose``."""
        from mcp import Client, StdioServerParameters, stdio_client  # the SDK only for MCP runs
        from mcp.client.streamable_http import streamable_http_client
        from mcp.types import Implementation

        server: Any
        http: Any = None
        limit = self.max_reply_bytes
        if self.target.url is not None:
            http = _capped_http_client(limit)
            server = streamable_http_client(
                self.target.url, http_client=http, max_sse_event_size=limit
            )
        else:
            # the server runs behind the line cap (``mcp_stdio_cap``), which starts it
            relay = [str(RELAY), str(limit), "--", *self.target.command]
            params = StdioServerParameters(command=sys.executable, args=relay)
            # its stderr reaches ours as before, and its last line is kept for our error
            self._stderr = StderrTail(_stderr())
            server = stdio_client(params, errlog=self._stderr.writer)
        client = Client(
            server,
            client_info=Implementation(name="agent-sandbox", version="1"),
            read_timeout_seconds=self.call_timeout,
        )
        # ``open`` bounds the start-up: on a timeout it cancels this task, wherever it waits.
        try:
            await client.__aenter__()
        except Exception as e:  # reported by ``open``
            self._error = e
            self._ready.set()
            return
        finally:
            if self._stderr is not None:
                self._stderr.close_writer()  # the server has its own end
        try:
            info = client.server_info
            self.server_name = info.name if info is not None else ""
            self.server_version = str(info.version or "") if info is not None else ""
            self.tools = await _list_all(client)
            self._client = client
        except Exception as e:  # reported by ``open``
            self._error = e
        self._ready.set()
        try:
            if self._error is None:
                await self._closing.wait()
        finally:
            self._client = None
            with contextlib.suppress(BaseException):
                await client.__aexit__(None, None, None)
            if http is not None:
                with contextlib.suppress(BaseException):
                    await http.aclose()

    async def call(self, name: str, args: dict[str, Any], *, session: str) -> Any:
        """``tools/call`` with the episode's session in ``_meta``; the SDK's ``CallToolResult``."""
        client = self._client
        if client is None:
            raise McpCallError("the MCP connection is closed", kind="connection")
        from mcp import MCPError

        try:
            return await asyncio.wait_for(
                client.call_tool(
                    name,
                    args,
                    read_timeout_seconds=self.call_timeout,
                    meta={META_SESSION: session},
                ),
                self.call_timeout + 5.0,
            )
        except asyncio.TimeoutError:
            raise McpCallError(
                f"the MCP server did not answer {name} within {self.call_timeout:g}s",
                kind="timeout",
            ) from None
        except MCPError as e:
            kind = TOO_LARGE if _over_the_cap(e) else _KINDS.get(e.code, "protocol")
            raise McpCallError(
                f"the MCP server failed {name}: JSON-RPC error {e.code}: {e.message}", kind=kind
            ) from None
        except Exception as e:  # transport failures surface as many types; all are infra
            raise McpCallError(
                f"lost the MCP server during {name}: {_describe(e)}", kind="connection"
            ) from None

    async def aclose(self) -> None:
        """Close the client (a start-up still under way is cancelled)."""
        self._closing.set()
        task, self._task = self._task, None
        if task is None:
            return
        if not self._ready.is_set():
            task.cancel()
        try:
            await asyncio.wait_for(task, 10.0)
        except (asyncio.TimeoutError, asyncio.CancelledError):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task


def _over_the_cap(error: Any) -> bool:
    """Whether an SDK error says the server's answer was over the cap: the line cap's error
    (stdio), a JSON body cut off by the HTTP client, or an SSE event over its limit."""
    message = str(getattr(error, "message", "") or error)
    return (
        getattr(error, "code", None) == TOO_LARGE_CODE
        or "answer is larger than" in message
        or ("exceeded the" in message and "byte limit" in message)
    )


def _capped_http_client(limit: int) -> Any:
    """The SDK's own HTTP client, its answers capped at ``limit`` bytes (``reply_cap``); an
    event stream is left to the SDK's per-event limit (``max_sse_event_size``)."""
    import httpx2
    from mcp.shared._httpx_utils import create_mcp_http_client

    class McpReplyTooLarge(httpx2.StreamError):
        """An answer over the cap, raised where the SDK reads a JSON body."""

    client = create_mcp_http_client()
    cap_client(client, limit, error=McpReplyTooLarge, stream=httpx2.AsyncByteStream)
    return client


def _stderr() -> Any:
    """Where a stdio server's stderr goes: ours, or the process's when ours is not a file (a
    captured or redirected ``sys.stderr`` without a descriptor)."""
    try:
        sys.stderr.fileno()
        return sys.stderr
    except (AttributeError, OSError, ValueError):
        return sys.__stderr__


async def _list_all(client: Any) -> list[Any]:
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(10_000):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            return tools
    raise ConfigError("the MCP server's tool list does not end (10,000 pages)")


def _describe(error: BaseException) -> str:
    """The innermost message of an error (the SDK raises exception groups)."""
    while getattr(error, "exceptions", None):  # an exception group: its first leaf
        error = error.exceptions[0]  # type: ignore[attr-defined]
    if isinstance(error, ConfigError):
        return str(error)
    text = str(error).strip() or "no message"
    return f"{type(error).__name__}: {text}"


def response_of(result: Any) -> Response:
    """A tool result as the mock tools' ``Response``.

    A result of another mock tool server (its ``structuredContent`` is the native answer ``ok``,
    ``body``, ``error``, ``provenance``) is unwrapped; otherwise ``isError`` decides ``ok``, the
    error is the text, and the body is the structured content, else the text (parsed when it is
    JSON; several content items become a list, non-text items their JSON form). Numbers JSON
    cannot hold (``NaN``, ``Infinity``, which Python's ``json`` writes) become the strings
    ``"NaN"``, ``"Infinity"``, ``"-Infinity"`` here, before the answer is observed or recorded,
    so a replay of the recording observes the same text (``mock_tools.json_numbers``)."""
    response = _response(result)
    body = finite_json(response.body)
    return response if body is response.body else response.model_copy(update={"body": body})


def _response(result: Any) -> Response:
    structured = result.structured_content
    if isinstance(structured, dict) and {"ok", "body", "error", "provenance"} <= structured.keys():
        return Response(
            ok=bool(structured["ok"]),
            body=structured["body"],
            error=str(structured["error"] or ""),
        )
    texts = [getattr(item, "text", None) for item in result.content]
    if result.is_error:
        message = "\n".join(t for t in texts if t) or "the tool reported an error"
        return Response(ok=False, error=message)
    if structured is not None:
        return Response(ok=True, body=structured)
    values = [
        _parse(t) if t is not None else item.model_dump(mode="json", by_alias=True)
        for item, t in zip(result.content, texts, strict=True)
    ]
    body: Any = values[0] if len(values) == 1 else values
    return Response(ok=True, body=body if values else "")


def _parse(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # not JSON, or nested too deep to read: the text
        return text
