"""The cap on a model reply's size, applied where the reply's bytes are read off the wire.

A reply is a completion's body as the endpoint sends it (its bytes on the wire). An endpoint that
answers with megabytes of text per turn would otherwise grow every later request of the episode
(the history holds each reply) and its trajectory line without bound. ``cap_replies(client,
limit)`` adds a response hook to the HTTP client of an ``openai.AsyncOpenAI``: a completion
whose ``Content-Length`` says more than ``limit`` bytes is refused before its body is read, and
one that sends more while being read is cut off there. Either raises ``ReplyTooLarge``, which the
model turns into a ``ModelError`` of kind ``reply_too_large`` (not retried: the same request
would get the same flood; the episode counts it as the model's outcome, see ``agents.errors``).
Other answers of the endpoint (``/models``) are not capped.

Completions are asked for uncompressed (``Accept-Encoding: identity``); a gzip or deflate body
sent anyway is counted as it inflates, so a small compressed body cannot hide a large reply.
"""

from __future__ import annotations

import zlib
from collections.abc import AsyncIterator
from typing import Any

import openai

from agents.errors import REPLY_TOO_LARGE
from agents.model import MAX_REPLY_BYTES as DEFAULT_MAX_REPLY_BYTES

__all__ = [
    "DEFAULT_MAX_REPLY_BYTES",
    "REPLY_TOO_LARGE",
    "ReplyTooLarge",
    "cap_replies",
    "capped_path",
    "over_the_cap",
    "reply_too_large",
]

_COMPLETIONS = "/chat/completions"
_INFLATED = frozenset({"gzip", "x-gzip", "deflate"})
"""Content encodings counted as they inflate (zlib reads gzip and zlib-wrapped deflate)."""


class ReplyTooLarge(openai.OpenAIError):
    """A completion's body is over the cap. An ``OpenAIError``, so the client library passes it
    on as it is, from inside its request."""


def cap_replies(client: Any, limit: int) -> None:
    """Cap the completions ``client`` (the ``AsyncClient`` an ``openai.AsyncOpenAI`` sends
    with) reads at ``limit`` bytes each."""

    async def check(response: Any) -> None:
        if not capped_path(str(response.request.url.path)):
            return
        declared = response.headers.get("content-length")
        if declared is not None and declared.isdigit() and int(declared) > limit:
            await response.aclose()
            raise ReplyTooLarge(_message(f"{int(declared)} bytes", limit))
        encoding = response.headers.get("content-encoding", "").strip().lower()
        response.stream = _capped(response.stream, limit, encoding in _INFLATED)

    client.headers["Accept-Encoding"] = "identity"
    client.event_hooks["response"] = [*client.event_hooks["response"], check]


def capped_path(path: str) -> bool:
    """Whether answers to ``path`` are capped (completions; ``/models`` and the rest are not)."""
    return path.endswith(_COMPLETIONS)


def over_the_cap(limit: int) -> ReplyTooLarge:
    """The error of a body that went on past ``limit`` bytes (a transport that reads whole
    bodies raises it where it reads them: ``agents.models.lean_transport``)."""
    return ReplyTooLarge(_message(f"more than {limit} bytes", limit))


def reply_too_large(error: BaseException) -> ReplyTooLarge | None:
    """The ``ReplyTooLarge`` behind ``error`` (itself, or the exception it was raised from by a
    client library that wraps what its transport raised), if any."""
    for candidate in (error, error.__cause__):
        if isinstance(candidate, ReplyTooLarge):
            return candidate
    return None


def _message(size: str, limit: int) -> str:
    return (
        f"the model's reply was {size}, over the limit of {limit} bytes (model.max_reply_bytes, "
        "--max-reply-bytes)"
    )


def _capped(stream: Any, limit: int, inflated: bool) -> Any:
    """``stream`` (the library's ``AsyncByteStream``) cut off after ``limit`` bytes, counted
    once inflated when ``inflated``."""
    base = next(c for c in type(stream).__mro__ if c.__name__ == "AsyncByteStream")

    class Capped(base):  # type: ignore[misc, valid-type]
        async def __aiter__(self) -> AsyncIterator[bytes]:
            seen = 0
            inflater = zlib.decompressobj(32 + zlib.MAX_WBITS) if inflated else None
            async for chunk in stream:
                seen += len(chunk) if inflater is None else _inflated_size(inflater, chunk, limit)
                if seen > limit:
                    raise over_the_cap(limit)
                yield chunk

        async def aclose(self) -> None:
            await stream.aclose()

    return Capped()


def _inflated_size(inflater: Any, chunk: bytes, limit: int) -> int:
    """How many bytes ``chunk`` inflates to, counting no further than just past ``limit`` (the
    output is dropped as it comes; the client library inflates the body itself). A body that
    does not inflate counts as it is sent: the library reports it."""
    size, data = 0, chunk
    try:
        while data and size <= limit:
            size += len(inflater.decompress(data, limit + 1 - size))
            data = inflater.unconsumed_tail
    except zlib.error:
        return len(chunk)
    return size
