"""A lean HTTP/1.1 transport for the openai package's HTTP client, for plain ``http://`` endpoints.

The client the ``openai`` package builds sends each request through a connection pool, an
HTTP/1.1 state machine and an async socket layer written in Python, which cost several times
what the request itself costs on a local model server (vLLM, llama.cpp, a test's fake). For
``http://`` URLs ``LeanTransport`` sends the request line, the headers and the body in one
write on a kept-alive asyncio connection and reads the answer with ``httptools`` (the parser
uvicorn uses; content-length and chunked bodies, keep-alive); ``https://`` and anything else go
to the package's usual transport. Above the transport nothing changes: the client builds the
same request (headers, body), and the answer is the same ``Response``, so the package's errors,
retries and typed responses work as before.

Errors are the HTTP library's own (``ConnectError``, ``ConnectTimeout``, ``ReadTimeout``,
``WriteTimeout``, ``ReadError``, ``RemoteProtocolError``), which the package turns into
``APIConnectionError`` / ``APITimeoutError``. A kept-alive connection the server closed while it
was idle is replaced once, when it failed before any byte of an answer. Imports ``httpx2`` (the
HTTP library the ``openai`` package uses) and ``httptools``; ``available()`` says whether both are.

Timeouts are ``asyncio.timeout`` scopes (Python 3.11+): ``asyncio.wait_for`` before 3.12 can
return a result that arrived together with a cancellation and drop the cancellation, so a run
stopped with SIGTERM could see an episode go on to its next request after its model was closed.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import AsyncIterator, Awaitable
from typing import Any, TypeVar

import httpx2

from agents.models.reply_limit import capped_path, over_the_cap

httptools: Any
try:
    import httptools
except ImportError:  # pragma: no cover - uvicorn[standard] brings it
    httptools = None

__all__ = ["LeanTransport", "available", "within"]

T = TypeVar("T")

MAX_IDLE = 32
"""Kept-alive connections per server, at most (a run has one per episode in flight)."""


async def within(awaitable: Awaitable[T], seconds: float | None) -> T:
    """``awaitable``'s result, or ``TimeoutError`` after ``seconds`` (None: no limit); a
    cancellation is never lost (see the module doc)."""
    if seconds is None:
        return await awaitable
    if sys.version_info >= (3, 11):
        async with asyncio.timeout(seconds):
            return await awaitable
    return await asyncio.wait_for(awaitable, seconds)  # pragma: no cover - Python 3.10


def available() -> bool:
    return httptools is not None


class _Answer:
    """What the parser found in one response (httptools' callbacks)."""

    def __init__(self) -> None:
        self.headers: list[tuple[bytes, bytes]] = []
        self.body: list[bytes] = []
        self.size = 0
        self.done = False
        self.until_close = False
        self.keep_alive = False
        self.parser: Any = None

    def on_header(self, name: bytes, value: bytes) -> None:
        self.headers.append((name, value))

    def on_headers_complete(self) -> None:
        self.keep_alive = self.parser.should_keep_alive()
        names = {name.lower() for name, _ in self.headers}
        self.until_close = b"content-length" not in names and b"transfer-encoding" not in names

    def on_body(self, body: bytes) -> None:
        self.body.append(body)
        self.size += len(body)

    def on_message_complete(self) -> None:
        self.keep_alive = self.keep_alive and self.parser.should_keep_alive()
        self.done = True


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class _ClosedEarly(Exception):
    """The server closed a kept-alive connection before it answered anything."""


def _timeouts(request: httpx2.Request) -> tuple[float | None, float | None, float | None]:
    timeout = request.extensions.get("timeout") or {}
    return timeout.get("connect"), timeout.get("read"), timeout.get("write")


def _head(request: httpx2.Request, body: bytes) -> bytes:
    url = request.url
    target = url.raw_path or b"/"
    lines = [b"%s %s HTTP/1.1" % (request.method.encode("ascii"), target)]
    names = set()
    for name, value in request.headers.raw:
        names.add(name.lower())
        lines.append(name + b": " + value)
    if body and b"content-length" not in names and b"transfer-encoding" not in names:
        lines.append(b"Content-Length: %d" % len(body))
    return b"\r\n".join(lines) + b"\r\n\r\n"


class _Body(httpx2.AsyncByteStream):
    """A body read whole, handed on as a stream: a ``Response`` made with ``content=`` counts
    as read at once, so the client's response hooks (``reply_limit.cap_replies``, which counts
    a compressed body as it inflates) would see it too late."""

    def __init__(self, parts: list[bytes]) -> None:
        self._parts = parts

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for part in self._parts:
            yield part


class LeanTransport(httpx2.AsyncBaseTransport):
    """``http://`` requests on kept-alive asyncio connections; the rest to ``fallback``."""

    def __init__(
        self, fallback: httpx2.AsyncBaseTransport | None = None, max_reply_bytes: int | None = None
    ) -> None:
        self._fallback = fallback or httpx2.AsyncHTTPTransport()
        self.max_reply_bytes = max_reply_bytes
        """The cap on a completion's body as sent (``agents.models.reply_limit``): this
        transport reads bodies whole, so it stops reading one that goes on past the cap."""
        self._idle: dict[tuple[str, int], list[_Connection]] = {}

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme != "http" or httptools is None:
            return await self._fallback.handle_async_request(request)
        body = await request.aread()
        data = _head(request, body) + body
        origin = (url.host, url.port or 80)
        connect, read, write = _timeouts(request)
        timeouts = (read, write)
        limit = self.max_reply_bytes if capped_path(url.path) else None
        for reused in (True, False):
            conn = self._take(origin) if reused else None
            if reused and conn is None:
                continue
            if conn is None:
                conn = await self._open(origin, connect)
            try:
                status, answer, keep = await self._exchange(conn, data, timeouts, reused, limit)
            except _ClosedEarly:
                conn.close()
                continue  # the server closed it while it was idle: once more on a new one
            except BaseException:
                conn.close()
                raise
            if keep:
                self._give_back(origin, conn)
            else:
                conn.close()
            return httpx2.Response(
                status,
                headers=answer.headers,
                stream=_Body(answer.body),
                extensions={"http_version": b"HTTP/1.1"},
            )
        raise httpx2.RemoteProtocolError("Server disconnected without sending a response.")

    async def _open(self, origin: tuple[str, int], timeout: float | None) -> _Connection:
        try:
            reader, writer = await within(asyncio.open_connection(origin[0], origin[1]), timeout)
        except asyncio.TimeoutError as e:
            raise httpx2.ConnectTimeout(f"connecting to {origin[0]}:{origin[1]} timed out") from e
        except OSError as e:
            raise httpx2.ConnectError(str(e)) from e
        return _Connection(reader, writer)

    async def _exchange(
        self,
        conn: _Connection,
        data: bytes,
        timeouts: tuple[float | None, float | None],
        reused: bool,
        limit: int | None,
    ) -> tuple[int, _Answer, bool]:
        read, write = timeouts
        try:
            conn.writer.write(data)
            await within(conn.writer.drain(), write)
        except asyncio.TimeoutError as e:
            raise httpx2.WriteTimeout("writing the request timed out") from e
        except OSError as e:
            if reused:
                raise _ClosedEarly from e
            raise httpx2.WriteError(str(e)) from e
        answer = _Answer()
        parser = answer.parser = httptools.HttpResponseParser(answer)
        got_any = False
        while not answer.done:
            try:
                chunk = await within(conn.reader.read(65536), read)
            except asyncio.TimeoutError as e:
                raise httpx2.ReadTimeout("reading the response timed out") from e
            except OSError as e:
                if reused and not got_any:
                    raise _ClosedEarly from e
                raise httpx2.ReadError(str(e)) from e
            if not chunk:
                if reused and not got_any:
                    raise _ClosedEarly
                if answer.until_close:  # no length given: the body ends with the connection
                    return parser.get_status_code(), answer, False
                raise httpx2.RemoteProtocolError("Server disconnected before the response ended.")
            got_any = True
            try:
                parser.feed_data(chunk)
            except httptools.HttpParserError as e:
                raise httpx2.RemoteProtocolError(f"malformed HTTP response: {e}") from e
            if limit is not None and answer.size > limit:
                raise over_the_cap(limit)  # the connection is closed by the caller
        return parser.get_status_code(), answer, answer.keep_alive

    def _take(self, origin: tuple[str, int]) -> _Connection | None:
        idle = self._idle.get(origin)
        while idle:
            conn = idle.pop()
            if not conn.reader.at_eof() and not conn.writer.is_closing():
                return conn
            conn.close()
        return None

    def _give_back(self, origin: tuple[str, int], conn: _Connection) -> None:
        idle = self._idle.setdefault(origin, [])
        if len(idle) < MAX_IDLE:
            idle.append(conn)
        else:
            conn.close()

    async def aclose(self) -> None:
        for idle in self._idle.values():
            for conn in idle:
                conn.close()
        self._idle.clear()
        await self._fallback.aclose()

    def __repr__(self) -> str:
        return f"LeanTransport(idle={sum(len(v) for v in self._idle.values())})"


def lean_http_client(max_reply_bytes: int | None = None, **kwargs: Any) -> Any:
    """The ``openai`` package's default async HTTP client (its timeouts, limits, redirects)
    over ``LeanTransport`` (``max_reply_bytes``: its cap on a completion's body)."""
    import openai

    transport = LeanTransport(max_reply_bytes=max_reply_bytes)
    return openai.DefaultAsyncHttpxClient(transport=transport, **kwargs)
