"""A raw HTTP/1.1 server on 127.0.0.1 for model-client tests: it keeps each request's bytes and
answers exactly as scripted (lengths, chunks, closes, silence)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

Answer = Callable[[bytes], bytes | None]
"""The bytes to send for one request's bytes (None: close the connection without answering)."""


class RawServer:
    """Answers each request with ``answer(request bytes)``; counts connections and requests."""

    def __init__(self, answer: Answer, *, close_after: int | None = None) -> None:
        self.answer = answer
        self.close_after = close_after
        self.connections = 0
        self.requests: list[bytes] = []
        self.port = 0
        self._server: asyncio.Server | None = None

    async def __aenter__(self) -> RawServer:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.port = self._server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        await self._server.wait_closed()

    def url(self, path: str = "/v1/chat/completions") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                out = self.answer(request)
                if out is None:
                    break
                writer.write(out)
                await writer.drain()
                served += 1
                if self.close_after is not None and served >= self.close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()
