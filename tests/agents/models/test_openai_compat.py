"""OpenAICompatModel against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json

import pytest

from agents.errors import ModelError, ModelUnreachable
from agents.models import OpenAICompatModel, RetryPolicy
from agents.toolenv import FINISH_FUNCTION
from tests.agents.models.openai_server import (
    Reply,
    ScriptedOpenAIServer,
    error_reply,
    free_port,
    slow,
    text_reply,
    tool_call_reply,
)

FAST = RetryPolicy(max_retries=3, initial=0.01, max_backoff=0.05, jitter=0.01)
MESSAGES = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Fly me to Paris."},
]
SEARCH = {
    "type": "function",
    "function": {
        "name": "search_for_flights",
        "description": "Search flights.",
        "parameters": {"type": "object", "properties": {"to": {"type": "string"}}},
    },
}


def make_model(server: ScriptedOpenAIServer, **kwargs) -> OpenAICompatModel:
    kwargs.setdefault("retry", FAST)
    kwargs.setdefault("timeout", 2.0)
    return OpenAICompatModel("test-model", server.base_url, **kwargs)


async def test_tool_call_turn_with_usage_and_cost(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.push(
        tool_call_reply(
            "search_for_flights",
            '{"to": "PAR"}',
            content="Searching.",
            call_id="c1",
            prompt_tokens=120,
            completion_tokens=30,
        )
    )
    model = make_model(openai_server, price_prompt=0.001, price_completion=0.002)
    turn = await model.complete(MESSAGES, [SEARCH, FINISH_FUNCTION], {"temperature": 0.0})
    assert turn.content == "Searching."
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("c1", "search_for_flights", '{"to": "PAR"}')
    ]
    assert turn.usage.prompt_tokens == 120 and turn.usage.completion_tokens == 30
    assert turn.usage.cost == pytest.approx(120 * 0.001 + 30 * 0.002)
    assert turn.latency_ms > 0
    sent = openai_server.requests[0]
    assert sent["model"] == "test-model"
    assert sent["temperature"] == 0.0
    assert [t["function"]["name"] for t in sent["tools"]] == ["search_for_flights", "Finish"]
    await model.aclose()


async def test_retries_429_with_retry_after_then_500_then_succeeds(
    openai_server: ScriptedOpenAIServer,
) -> None:
    openai_server.push(
        error_reply(429, retry_after=0.2),
        error_reply(500),
        tool_call_reply("search_for_flights", {"to": "PAR"}),
    )
    model = make_model(openai_server)
    turn = await model.complete(MESSAGES, [SEARCH, FINISH_FUNCTION])
    assert turn.tool_calls[0].name == "search_for_flights"
    assert len(openai_server.requests) == 3
    times = openai_server.request_times
    # Retry-After (0.2 s) was honoured, the 500 got the short exponential backoff
    assert times[1] - times[0] >= 0.19
    assert times[2] - times[1] < 0.19
    await model.aclose()


async def test_retry_after_is_capped(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.push(error_reply(429, retry_after=30), text_reply("ok"))
    policy = FAST.model_copy(update={"max_retry_after": 0.05})
    model = make_model(openai_server, retry=policy)
    turn = await model.complete(MESSAGES, [])
    assert turn.content == "ok"
    assert openai_server.request_times[1] - openai_server.request_times[0] < 2
    await model.aclose()


async def test_timeout_is_retried(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.push(slow(text_reply("late"), 0.3), text_reply("on time"))
    model = make_model(openai_server, timeout=0.1)
    turn = await model.complete(MESSAGES, [])
    assert turn.content == "on time"
    assert len(openai_server.requests) == 2
    await model.aclose()


@pytest.mark.parametrize(
    ("reply", "kind"),
    [(error_reply(500), "server"), (error_reply(429, retry_after=0), "rate_limit")],
)
async def test_endpoint_that_never_recovers_raises_model_error(
    openai_server: ScriptedOpenAIServer, reply, kind: str
) -> None:
    openai_server.default = reply
    model = make_model(openai_server)
    with pytest.raises(ModelError) as info:
        await model.complete(MESSAGES, [SEARCH])
    assert info.value.kind == kind
    assert info.value.attempts == FAST.max_retries + 1
    assert len(openai_server.requests) == FAST.max_retries + 1
    assert "after 4 attempts" in str(info.value)
    await model.aclose()


async def test_persistent_timeout_raises_timeout_kind(openai_server: ScriptedOpenAIServer) -> None:
    openai_server.default = slow(text_reply("late"), 0.3)
    model = make_model(openai_server, timeout=0.1, retry=FAST.model_copy(update={"max_retries": 1}))
    with pytest.raises(ModelError) as info:
        await model.complete(MESSAGES, [])
    assert info.value.kind == "timeout"
    assert info.value.attempts == 2
    await model.aclose()


@pytest.mark.parametrize(
    ("status", "kind"), [(400, "bad_request"), (401, "auth"), (404, "model_not_found")]
)
async def test_client_errors_are_not_retried(
    openai_server: ScriptedOpenAIServer, status: int, kind: str
) -> None:
    openai_server.default = error_reply(status, message="nope")
    model = make_model(openai_server)
    with pytest.raises(ModelError) as info:
        await model.complete(MESSAGES, [SEARCH])
    assert info.value.kind == kind
    assert info.value.attempts == 1
    assert len(openai_server.requests) == 1
    assert f"HTTP {status}" in str(info.value)
    await model.aclose()


async def test_connection_refused_raises_connection_kind() -> None:
    model = OpenAICompatModel(
        "m", f"http://127.0.0.1:{free_port()}/v1", retry=FAST.model_copy(update={"max_retries": 1})
    )
    with pytest.raises(ModelError) as info:
        await model.complete(MESSAGES, [])
    assert info.value.kind == "connection"
    assert info.value.attempts == 2
    await model.aclose()


async def test_history_is_sent_in_strict_openai_shape(openai_server: ScriptedOpenAIServer) -> None:
    history = [
        *MESSAGES,
        {
            "role": "assistant",
            "content": "Searching.",
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "search_for_flights", "arguments": '{"to": "PAR"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "search_for_flights", "content": "{}"},
        {"role": "assistant", "content": "oops", "tool_calls": []},
        {"role": "user", "content": "Call a function."},
    ]
    model = make_model(openai_server, params={"temperature": 0.7, "seed": 1})
    await model.complete(history, [SEARCH], {"temperature": 0.2})
    sent = openai_server.requests[0]
    assert sent["messages"][3] == {"role": "tool", "tool_call_id": "c1", "content": "{}"}
    assert "tool_calls" not in sent["messages"][4]
    assert sent["temperature"] == 0.2 and sent["seed"] == 1
    assert json.loads(sent["messages"][2]["tool_calls"][0]["function"]["arguments"]) == {
        "to": "PAR"
    }
    await model.aclose()


async def test_probe_lists_models(openai_server: ScriptedOpenAIServer) -> None:
    model = make_model(openai_server)
    assert await model.probe() == ["scripted-model"]
    assert openai_server.model_list_calls == 1
    await model.aclose()


async def test_probe_of_closed_port_raises_unreachable() -> None:
    base_url = f"http://127.0.0.1:{free_port()}/v1"
    model = OpenAICompatModel("m", base_url, probe_timeout=0.5)
    with pytest.raises(ModelUnreachable) as info:
        await model.probe()
    assert base_url in str(info.value)
    assert info.value.kind == "connection"
    await model.aclose()


async def test_a_single_slot_policy_does_not_retry_a_timeout(
    openai_server: ScriptedOpenAIServer,
) -> None:
    """llama.cpp keeps generating for a request the client gave up on, on its only slot: a retry
    would queue behind that generation, so ``retry_timeouts: false`` reports the timeout at once
    (an infrastructure error, resumable), while a 5xx is still retried."""
    # a timeout long enough for the request to reach the server on a loaded machine (at 0.1 s
    # it sometimes never arrived, under a load of 15 on two cores), the reply far later still
    openai_server.push(slow(text_reply("late"), 2.5), text_reply("on time"))
    policy = FAST.model_copy(update={"retry_timeouts": False})
    model = make_model(openai_server, timeout=0.5, retry=policy)
    with pytest.raises(ModelError) as info:
        await model.complete(MESSAGES, [])
    assert info.value.kind == "timeout" and info.value.attempts == 1
    assert len(openai_server.requests) == 1
    openai_server.reset()
    openai_server.push(error_reply(500), text_reply("recovered"))
    assert (await model.complete(MESSAGES, [])).content == "recovered"
    assert len(openai_server.requests) == 2
    await model.aclose()


async def test_a_reply_cut_at_max_tokens_without_a_call_is_an_unusable_turn(
    openai_server: ScriptedOpenAIServer,
) -> None:
    cut = text_reply("I will now think about the flights to Paris and then I")
    cut.body["choices"][0]["finish_reason"] = "length"
    openai_server.push(cut, text_reply("A complete thought."))
    model = make_model(openai_server)
    turn = await model.complete(MESSAGES, [SEARCH], {"max_tokens": 12})
    assert turn.format_error is not None
    assert turn.format_error.startswith(
        'the reply was cut at the token limit (finish_reason "length")'
    )
    assert turn.content == "I will now think about the flights to Paris and then I"
    assert (await model.complete(MESSAGES, [SEARCH])).format_error is None
    await model.aclose()


LLAMA_CPP_OVERFLOW = {
    "error": {
        "message": "This model's maximum context length is 4096 tokens. However, you requested "
        "4608 tokens (4352 in the messages, 256 in the completion). Please reduce the length of "
        "the messages or completion.",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}
"""What llama-cpp-python's server answers (HTTP 400) to a prompt longer than its context."""


@pytest.mark.parametrize(
    "body",
    [
        LLAMA_CPP_OVERFLOW,
        {
            "error": {
                "message": "This model's maximum context length is 32768 tokens. However, "
                "you requested 40000 tokens in the messages.",
                "type": "BadRequestError",
            }
        },
    ],
)
async def test_a_prompt_longer_than_the_context_is_its_own_kind_and_not_retried(
    openai_server: ScriptedOpenAIServer, body: dict
) -> None:
    openai_server.push(Reply(status=400, body=body))
    model = make_model(openai_server)
    with pytest.raises(ModelError) as info:
        await model.complete(MESSAGES, [SEARCH])
    assert info.value.kind == "context_length" and info.value.attempts == 1
    assert len(openai_server.requests) == 1
    await model.aclose()
