"""LeanTransport: HTTP/1.1 for the openai client on kept-alive connections, against raw servers
on 127.0.0.1 that answer exactly as scripted (lengths, chunks, closes, silence)."""

from __future__ import annotations

import asyncio

import httpx2
import pytest

from agents.errors import ModelError
from agents.models import OpenAICompatModel, RetryPolicy
from agents.models.lean_transport import LeanTransport
from agents.models.reply_limit import ReplyTooLarge
from tests.agents.models.raw_server import Answer, RawServer

OK = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"a": true}'
COMPLETION = (
    b'{"id":"x","object":"chat.completion","created":0,"model":"m","choices":[{"index":0,'
    b'"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}]}'
)


async def _post(transport: LeanTransport, url: str, **extensions: object) -> httpx2.Response:
    """A request through ``transport`` alone, its body read as the HTTP client reads it."""
    request = httpx2.Request("POST", url, content=b'{"q": 1}', extensions=extensions)
    response = await transport.handle_async_request(request)
    await response.aread()
    return response


async def test_requests_reuse_one_kept_alive_connection_and_send_one_write() -> None:
    """Ten requests in turn make one connection; each request arrives whole (head and body)."""
    async with RawServer(lambda _: OK) as server:
        transport = LeanTransport()
        for _ in range(10):
            response = await _post(transport, server.url())
            assert response.status_code == 200 and response.json() == {"a": True}
        await transport.aclose()
    assert server.connections == 1 and len(server.requests) == 10
    assert server.requests[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert server.requests[0].endswith(b'\r\n\r\n{"q": 1}')


async def test_a_connection_the_server_closed_while_idle_is_replaced_once() -> None:
    async with RawServer(lambda _: OK, close_after=1) as server:
        transport = LeanTransport()
        for _ in range(3):
            assert (await _post(transport, server.url())).status_code == 200
        await transport.aclose()
    assert server.connections == 3


async def test_chunked_and_until_close_bodies_are_read_whole() -> None:
    chunked = (
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
        b'4\r\n{"a"\r\n7\r\n: true}\r\n0\r\n\r\n'
    )
    until_close = b'HTTP/1.1 200 OK\r\nconnection: close\r\n\r\n{"a": false}'
    answers = iter([chunked, until_close])
    async with RawServer(lambda _: next(answers)) as server:
        transport = LeanTransport()
        assert (await _post(transport, server.url())).json() == {"a": True}
        server.close_after = 0  # the next answer ends with its connection
        response = await _post(transport, server.url())
        assert response.json() == {"a": False}
        await transport.aclose()


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        (lambda _: None, httpx2.RemoteProtocolError),  # closes without a word
        (lambda _: b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\n{", httpx2.RemoteProtocolError),
        (lambda _: b"NOT HTTP AT ALL\r\n\r\n", httpx2.RemoteProtocolError),
    ],
)
async def test_broken_answers_are_the_http_library_errors(
    answer: Answer, error: type[Exception]
) -> None:
    async with RawServer(answer, close_after=1) as server:
        transport = LeanTransport()
        with pytest.raises(error):
            await _post(transport, server.url())
        await transport.aclose()


async def test_silence_is_a_read_timeout_and_a_closed_port_a_connect_error() -> None:
    never = asyncio.Event()

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await never.wait()

    server = await asyncio.start_server(silent, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    transport = LeanTransport()
    with pytest.raises(httpx2.ReadTimeout):
        await _post(transport, f"http://127.0.0.1:{port}/", timeout={"read": 0.2})
    server.close()
    never.set()
    await server.wait_closed()
    with pytest.raises(httpx2.ConnectError):
        await _post(transport, f"http://127.0.0.1:{port}/")
    await transport.aclose()


class _Recording(httpx2.AsyncBaseTransport):
    def __init__(self) -> None:
        self.urls: list[str] = []

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        self.urls.append(str(request.url))
        return httpx2.Response(200, content=b"{}")


async def test_https_goes_to_the_usual_transport() -> None:
    fallback = _Recording()
    transport = LeanTransport(fallback)
    await _post(transport, "https://api.example.invalid/v1/chat/completions")
    assert fallback.urls == ["https://api.example.invalid/v1/chat/completions"]


async def test_the_model_over_the_lean_transport_keeps_its_errors_and_retries() -> None:
    """A 500 then a completion: the model retries (one retry) and answers, on one connection;
    a server that keeps closing: ModelError of kind connection after the retries."""
    answers: list[bytes] = [
        b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 2\r\n\r\n{}",
        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s"
        % (len(COMPLETION), COMPLETION),
    ]
    fast = RetryPolicy(max_retries=2, initial=0.01, max_backoff=0.02, jitter=0.0)
    async with RawServer(lambda _: answers.pop(0)) as server:
        model = OpenAICompatModel("m", f"http://127.0.0.1:{server.port}/v1", retry=fast)
        turn = await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert turn.content == "hi" and turn.retries == 1 and server.connections == 1
    async with RawServer(lambda _: None) as closing:
        model = OpenAICompatModel("m", f"http://127.0.0.1:{closing.port}/v1", retry=fast)
        with pytest.raises(ModelError) as caught:
            await model.complete([{"role": "user", "content": "hi"}], [])
        await model.aclose()
    assert caught.value.kind == "connection" and caught.value.attempts == 3


async def test_a_completion_body_past_the_cap_is_not_read_further() -> None:
    """The transport reads bodies whole, so it stops at the reply cap itself: a chunked answer
    that goes on is cut off with the cap's error (``reply_limit``), and other paths are not
    capped."""
    big = b"HTTP/1.1 200 OK\r\ncontent-length: 5000\r\n\r\n" + b"x" * 5000
    async with RawServer(lambda _: big) as server:
        transport = LeanTransport(max_reply_bytes=1000)
        with pytest.raises(ReplyTooLarge, match="more than 1000 bytes"):
            await _post(transport, server.url())
        models = httpx2.Request("GET", server.url("/v1/models"))
        response = await transport.handle_async_request(models)
        assert len(await response.aread()) == 5000
        await transport.aclose()
