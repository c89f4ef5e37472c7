"""The cap on a tool's answer, applied where its bytes are read off the wire.

A tool server that answers one call with 50 MB, or with a body that never ends, would otherwise
be read whole into memory (and kept: the observation, the trajectory) or read for ever. The tool
transports read at most ``tools.max_reply_bytes`` bytes of one answer (``DEFAULT_MAX_TOOL_REPLY``,
4 MiB, by default) and end the call there with its own outcome: the agent observes a failed call
whose provenance is ``fault:reply_too_large`` (a broken answer of the tool, as an empty or a
malformed body is; not an infrastructure error, since asking again gets the same flood).

``cap_tool_replies(client, limit)`` puts the cap on an ``httpx`` client (the ``--tools-url`` and
in-process transports, and the external agents' forwarder, which sends through the same client):
a body whose ``Content-Length`` says more is refused before it is read, one that sends more is
cut off where it passes the limit (a gzip or deflate body counted as it inflates), and
``ToolReplyTooLarge`` is raised from the read (``http.too_large_observation`` is what the agent
observes). The MCP client caps its own transports with the same limit (``mcp_client``). May
import httpx and ``sandbox.store.defaults``.
"""

from __future__ import annotations

import functools
import zlib
from collections.abc import AsyncIterator
from typing import Any

import httpx

from sandbox.store.defaults import DEFAULT_MAX_TOOL_REPLY as MAX_TOOL_REPLY

__all__ = [
    "DEFAULT_MAX_TOOL_REPLY",
    "TOO_LARGE",
    "ToolReplyTooLarge",
    "cap_client",
    "cap_tool_replies",
    "too_large_message",
]

DEFAULT_MAX_TOOL_REPLY = MAX_TOOL_REPLY
"""4 MiB: far above what a tool's JSON answer holds (ToolBench's observations are cut at 1024
characters before a model sees them), far below what would strain a run."""
TOO_LARGE = "reply_too_large"
"""The kind of the outcome (``fault:reply_too_large``)."""
_INFLATED = frozenset({"gzip", "x-gzip", "deflate"})
_STEP = 1 << 16


def too_large_message(size: str, limit: int) -> str:
    return (
        f"the tool's answer is larger than {limit} bytes ({size}; tools.max_reply_bytes, "
        "--max-tool-reply-bytes): it was not read"
    )


class ToolReplyTooLarge(httpx.StreamError):
    """A tool's answer over the cap (an ``httpx.StreamError``, raised from the body's read)."""


def cap_tool_replies(client: httpx.AsyncClient, limit: int) -> httpx.AsyncClient:
    """``client`` with every answer it reads capped at ``limit`` bytes (see the module)."""
    cap_client(client, limit, error=ToolReplyTooLarge, stream=httpx.AsyncByteStream)
    return client


def cap_client(client: Any, limit: int, *, error: type[Exception], stream: type) -> None:
    """Cap the answers an httpx-shaped ``client`` reads (httpx itself, or the MCP SDK's fork):
    ``error`` (raised from the read) and ``stream`` (the byte stream class the client's
    responses must hold) are the client library's."""
    capped = _capped_class(stream)

    async def check(response: Any) -> None:
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            return  # many messages over time: the MCP client bounds each event itself
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise error(too_large_message(f"{int(declared)} bytes declared", limit))
        encoding = response.headers.get("content-encoding", "").strip().lower()
        response.stream = capped(response.stream, limit, encoding in _INFLATED, error)

    client.headers["Accept-Encoding"] = "identity"
    client.event_hooks["response"] = [*client.event_hooks["response"], check]


@functools.cache
def _capped_class(base: type) -> type:
    return type("CappedStream", (_Capped, base), {})


class _Capped:
    """A response's byte stream that stops past ``limit`` bytes (inflated, when ``inflated``)."""

    def __init__(self, inner: Any, limit: int, inflated: bool, error: type[Exception]) -> None:
        self.inner = inner
        self.limit = limit
        self.error = error
        self.inflate = zlib.decompressobj(47) if inflated else None  # gzip or zlib header

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self.inner:
            seen += self._size(chunk)
            if seen > self.limit:
                raise self.error(too_large_message("more than that sent", self.limit))
            yield chunk

    def _size(self, chunk: bytes) -> int:
        """What ``chunk`` amounts to once inflated (its own size when it is not compressed, or
        not a stream ``zlib`` reads: the client then fails it as it decodes)."""
        if self.inflate is None:
            return len(chunk)
        size, data = 0, chunk
        try:
            while data:
                size += len(self.inflate.decompress(data, _STEP))
                data = self.inflate.unconsumed_tail
                if size > self.limit:
                    break
        except zlib.error:
            self.inflate = None
            return len(chunk)
        return size

    async def aclose(self) -> None:
        await self.inner.aclose()
