"""Unit tests of the OpenAI client with respx routes.

The ``openai`` package in use sends through ``httpx2`` (a fork of httpx) that respx does not
patch, so the routes are reached through the model's ``http_client`` seam: an ``httpx2`` mock
transport that hands each request to a respx router and converts the answer back.
"""

from __future__ import annotations

import email.utils

import httpx
import openai
import pytest
import respx

from agents.errors import ModelError
from agents.models import EndpointError, OpenAICompatModel, RetryPolicy
from agents.models.openai_errors import parse_retry_after, translate_openai_error

httpx2 = pytest.importorskip("httpx2")

BASE = "http://llm.test/v1"
FAST = RetryPolicy(max_retries=2, initial=0.0, max_backoff=0.0, jitter=0.0)
USER = [{"role": "user", "content": "hi"}]


def respx_client(router: respx.Router):
    """An httpx2 client whose transport answers from ``router``."""

    async def handle(request):
        await request.aread()
        req = httpx.Request(
            request.method, str(request.url), headers=request.headers.raw, content=request.content
        )
        try:
            resp = await router.async_handler(req)
        except httpx.TimeoutException as e:
            raise httpx2.ReadTimeout(str(e), request=request) from e
        except httpx.TransportError as e:
            raise httpx2.ConnectError(str(e), request=request) from e
        await resp.aread()
        return httpx2.Response(resp.status_code, headers=resp.headers.raw, content=resp.content)

    return httpx2.AsyncClient(transport=httpx2.MockTransport(handle))


def completion(content: str = "hello", **usage: int) -> dict:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5, **usage},
    }


def model_for(router: respx.Router, **kwargs) -> OpenAICompatModel:
    return OpenAICompatModel("m", BASE, retry=FAST, http_client=respx_client(router), **kwargs)


async def test_plain_text_turn() -> None:
    router = respx.Router(assert_all_called=True)
    router.post(f"{BASE}/chat/completions").respond(200, json=completion("hello"))
    turn = await model_for(router).complete(USER, [])
    assert turn.content == "hello" and turn.tool_calls == []
    assert turn.usage.prompt_tokens == 3 and turn.usage.completion_tokens == 2
    assert turn.raw["choices"][0]["message"]["content"] == "hello"


async def test_api_key_is_sent_as_bearer() -> None:
    router = respx.Router()
    route = router.post(f"{BASE}/chat/completions").respond(200, json=completion())
    model = OpenAICompatModel("m", BASE, "sk-test", retry=FAST, http_client=respx_client(router))
    await model.complete(USER, [])
    assert route.calls.last.request.headers["authorization"] == "Bearer sk-test"


async def test_connection_error_then_success() -> None:
    router = respx.Router()
    router.post(f"{BASE}/chat/completions").mock(
        side_effect=[httpx.ConnectError("refused"), httpx.Response(200, json=completion("ok"))]
    )
    turn = await model_for(router).complete(USER, [])
    assert turn.content == "ok"


async def test_completion_without_choices_is_malformed_and_retried() -> None:
    router = respx.Router()
    body = completion()
    body["choices"] = []
    route = router.post(f"{BASE}/chat/completions").respond(200, json=body)
    with pytest.raises(ModelError) as info:
        await model_for(router).complete(USER, [])
    assert info.value.kind == "malformed"
    assert route.call_count == FAST.max_retries + 1


async def test_tool_call_with_broken_arguments_is_kept_verbatim() -> None:
    router = respx.Router()
    body = completion()
    body["choices"][0]["message"] = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "t", "type": "function", "function": {"name": "f", "arguments": '{"a": '}}
        ],
    }
    router.post(f"{BASE}/chat/completions").respond(200, json=body)
    turn = await model_for(router).complete(USER, [])
    assert turn.tool_calls[0].arguments == '{"a": '
    with pytest.raises(ValueError):
        turn.tool_calls[0].parsed_args()


def test_retry_after_forms() -> None:
    assert parse_retry_after(httpx.Headers({"retry-after": "2.5"})) == 2.5
    assert parse_retry_after(httpx.Headers({"retry-after-ms": "150"})) == 0.15
    when = email.utils.formatdate(1_000_030, usegmt=True)
    assert parse_retry_after(httpx.Headers({"retry-after": when}), now=1_000_000) == 30
    assert parse_retry_after(httpx.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(httpx.Headers({})) is None


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (400, "bad_request", False),
        (401, "auth", False),
        (403, "auth", False),
        (404, "model_not_found", False),
        (408, "timeout", True),
        (422, "bad_request", False),
        (429, "rate_limit", True),
        (500, "server", True),
        (503, "server", True),
    ],
)
def test_status_mapping(status: int, kind: str, retryable: bool) -> None:
    request = httpx2.Request("POST", f"{BASE}/chat/completions")
    response = httpx2.Response(status, request=request, json={"error": {"message": "m"}})
    exc = openai.APIStatusError("m", response=response, body=None)
    err = translate_openai_error(exc, endpoint=BASE)
    assert isinstance(err, EndpointError)
    assert (err.kind, err.retryable, err.status) == (kind, retryable, status)


def test_transport_errors_mapping() -> None:
    request = httpx2.Request("POST", BASE)
    timeout = translate_openai_error(openai.APITimeoutError(request=request), endpoint=BASE)
    conn = translate_openai_error(openai.APIConnectionError(request=request), endpoint=BASE)
    other = translate_openai_error(openai.OpenAIError("weird"), endpoint=BASE)
    assert (timeout.kind, conn.kind, other.kind) == ("timeout", "connection", "other")
    assert timeout.retryable and conn.retryable and not other.retryable


async def test_backoff_grows_exponentially() -> None:
    from agents.models.retry import call_with_retries

    slept: list[float] = []

    async def fake_sleep(seconds: float) -> None:
        slept.append(seconds)

    async def always_fails() -> None:
        raise EndpointError("down", kind="server")

    policy = RetryPolicy(max_retries=3, initial=1.0, max_backoff=3.0, jitter=0.0)
    with pytest.raises(EndpointError) as info:
        await call_with_retries(always_fails, policy, sleep=fake_sleep)
    # every wait went through the injected sleep (no wall-clock bound: it would flake on a
    # loaded machine and adds nothing to the list of waits)
    assert slept == [1.0, 2.0, 3.0]
    assert info.value.attempts == 4


@pytest.mark.parametrize(
    "bad",
    [
        httpx.Response(
            200, text="<html>502 Bad Gateway</html>", headers={"content-type": "text/html"}
        ),
        httpx.Response(200, text='{"choices": [', headers={"content-type": "application/json"}),
        httpx.Response(200, text="", headers={"content-type": "application/json"}),
    ],
    ids=["html-page", "cut-body", "empty-body"],
)
async def test_a_body_that_is_not_json_is_retried_and_counted(bad: httpx.Response) -> None:
    router = respx.Router()
    route = router.post(f"{BASE}/chat/completions").mock(
        side_effect=[bad, httpx.Response(200, json=completion("ok"))]
    )
    turn = await model_for(router).complete(USER, [])
    assert turn.content == "ok" and turn.retries == 1 and route.call_count == 2


async def test_a_body_that_stays_broken_is_an_infra_error_after_the_retries() -> None:
    router = respx.Router()
    route = router.post(f"{BASE}/chat/completions").respond(200, text="<html>oops</html>")
    with pytest.raises(ModelError) as info:
        await model_for(router).complete(USER, [])
    assert info.value.kind == "malformed" and info.value.attempts == FAST.max_retries + 1
    assert route.call_count == FAST.max_retries + 1


async def test_cost_counts_cached_prompt_tokens_at_their_price() -> None:
    router = respx.Router()
    body = completion(prompt_tokens=1000, completion_tokens=100)
    body["usage"]["prompt_tokens_details"] = {"cached_tokens": 600}
    router.post(f"{BASE}/chat/completions").respond(200, json=body)
    model = model_for(router, price_prompt=2e-6, price_completion=8e-6, price_cached_prompt=0.5e-6)
    turn = await model.complete(USER, [])
    # 400 fresh prompt tokens, 600 cached ones, 100 completion tokens
    assert turn.usage.cost == pytest.approx(400 * 2e-6 + 600 * 0.5e-6 + 100 * 8e-6)
    plain = await model_for(router, price_prompt=2e-6, price_completion=8e-6).complete(USER, [])
    assert plain.usage.cost == pytest.approx(1000 * 2e-6 + 100 * 8e-6)
