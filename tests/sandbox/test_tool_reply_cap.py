"""The cap on a tool's answer where its bytes are read (issue 38 item 10, issue 40 item 10).

What it protects: an ``httpx`` client capped by ``cap_tool_replies`` refuses a body whose
``Content-Length`` is over the cap before reading it, cuts off one that goes on past it
(counted as it inflates when gzip), and lets one within it through whole; an event stream is
left to the MCP client's own per-event limit. The stdio line cap passes lines within the limit
untouched, answers a longer line's request with a JSON-RPC error of its own as soon as the line
passes the limit (found by the line's id, else the one request waiting), and drops the rest of
the line however long it is.
"""

from __future__ import annotations

import gzip
import json
import os
import threading
from collections.abc import AsyncIterator

import httpx
import pytest

from sandbox.tool_envs.mcp_stdio_cap import TOO_LARGE_CODE, _Waiting, relay
from sandbox.tool_envs.reply_cap import ToolReplyTooLarge, cap_tool_replies

LIMIT = 1000


def _client(handler: object) -> httpx.AsyncClient:
    transport = httpx.MockTransport(handler)  # type: ignore[arg-type]
    return cap_tool_replies(httpx.AsyncClient(transport=transport, base_url="http://t"), LIMIT)


async def _chunks(total: int) -> AsyncIterator[bytes]:
    for _ in range(total // 100):
        yield b"x" * 100


async def test_an_answer_within_the_cap_is_read_whole() -> None:
    async with _client(lambda r: httpx.Response(200, content=b"y" * LIMIT)) as client:
        assert (await client.get("/")).content == b"y" * LIMIT


async def test_a_declared_length_over_the_cap_is_refused_unread() -> None:
    async with _client(lambda r: httpx.Response(200, content=b"y" * (LIMIT + 1))) as client:
        with pytest.raises(ToolReplyTooLarge, match=f"larger than {LIMIT} bytes"):
            await client.get("/")


async def test_a_streamed_body_is_cut_off_where_it_passes_the_cap() -> None:
    read: list[int] = []

    async def endless() -> AsyncIterator[bytes]:
        while True:
            read.append(100)
            yield b"x" * 100

    async with _client(lambda r: httpx.Response(200, content=endless())) as client:
        with pytest.raises(ToolReplyTooLarge):
            await client.get("/")
    assert sum(read) == LIMIT + 100  # one chunk past the cap, no more
    async with _client(lambda r: httpx.Response(200, content=_chunks(LIMIT))) as client:
        assert len((await client.get("/")).content) == LIMIT


async def test_a_gzip_body_is_counted_as_it_inflates() -> None:
    bomb = gzip.compress(b"0" * (LIMIT * 50))
    assert len(bomb) < LIMIT

    async def streamed() -> AsyncIterator[bytes]:
        yield bomb

    def handler(request: httpx.Request) -> httpx.Response:
        assert request.headers["accept-encoding"] == "identity"  # asked uncompressed
        return httpx.Response(200, content=streamed(), headers={"content-encoding": "gzip"})

    async with _client(handler) as client:
        with pytest.raises(ToolReplyTooLarge):
            await client.get("/")


async def test_an_event_stream_is_not_capped_as_a_whole() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        events = b"".join(b"data: %d\n\n" % i for i in range(500))
        return httpx.Response(200, content=events, headers={"content-type": "text/event-stream"})

    async with _client(handler) as client:
        assert (await client.get("/")).content.count(b"data:") == 500


def _relayed(lines: list[bytes], sent: list[bytes], limit: int = LIMIT) -> list[bytes]:
    """What the line cap passes on of a server writing ``lines`` (requests ``sent`` before)."""
    waiting = _Waiting()
    for line in sent:
        waiting.sent(line)
    server_r, server_w = os.pipe()
    out_r, out_w = os.pipe()

    def write() -> None:
        with os.fdopen(server_w, "wb") as fh:
            for line in lines:
                fh.write(line)

    writer = threading.Thread(target=write)
    writer.start()
    relay(server_r, out_w, limit, waiting)
    writer.join()
    os.close(server_r)
    os.close(out_w)
    with os.fdopen(out_r, "rb") as fh:
        return fh.read().splitlines(keepends=True)


def _request(n: int) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": n, "method": "tools/call", "params": {}}).encode()


def _answer(n: int, size: int) -> bytes:
    body = {
        "jsonrpc": "2.0",
        "id": n,
        "result": {"content": [{"type": "text", "text": "x" * size}]},
    }
    return json.dumps(body).encode() + b"\n"


def test_the_line_cap_passes_lines_within_it_and_answers_a_longer_ones_request() -> None:
    small, big, after = _answer(1, 10), _answer(2, LIMIT * 20), _answer(3, 10)
    out = _relayed([small, big, after], [_request(1), _request(2), _request(3)])
    assert out[0] == small and out[2] == after
    error = json.loads(out[1])
    assert error["id"] == 2 and error["error"]["code"] == TOO_LARGE_CODE
    assert f"larger than {LIMIT} bytes" in error["error"]["message"]


def test_a_line_without_a_readable_id_answers_the_one_request_waiting() -> None:
    headless = b'{"result": "' + b"x" * (LIMIT * 5) + b'"}\n'
    (out,) = _relayed([headless], [_request(7)])
    assert json.loads(out)["id"] == 7


def test_a_line_that_never_ends_is_answered_at_the_cap_and_dropped() -> None:
    """An endless answer (here 2 MB, then the server stops writing): the error is written as
    soon as the line passes the cap, and nothing of the line follows it."""
    start = b'{"jsonrpc": "2.0", "id": "a-1", "result": {"text": "'
    out = _relayed([start, *[b"x" * 65536] * 32], [b'{"id": "a-1", "method": "tools/call"}\n'])
    (line,) = out
    assert json.loads(line)["id"] == "a-1" and len(line) < 400
