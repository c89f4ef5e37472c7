"""The lean request path sends the bytes the openai package's ``create`` sends.

``OpenAICompatModel`` posts its prepared body through the client's low-level ``post``
(``agents.models.chat_request``) instead of ``chat.completions.with_raw_response.create``, whose
per-call transform walks every message and tool. A recording server on 127.0.0.1 keeps the raw
bytes of each request (request line, headers in order, body); the model's request and the one
``create`` makes from the same values must be equal byte for byte, for several request shapes.
"""

from __future__ import annotations

import json
from typing import Any

import openai
import pytest

from agents.models import OpenAICompatModel
from agents.models.message_shapes import to_toolbench_messages
from agents.models.openai_compat import NO_API_KEY, to_openai_messages
from agents.models.reply_limit import DEFAULT_MAX_REPLY_BYTES, cap_replies
from agents.toolenv import FINISH_FUNCTION
from tests.agents.models.raw_server import RawServer

COMPLETION = json.dumps(
    {
        "id": "chatcmpl-rec",
        "object": "chat.completion",
        "created": 0,
        "model": "rec",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": "Done. é ✓"},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }
).encode()

SEARCH = {
    "type": "function",
    "function": {
        "name": "search_for_flights",
        "description": "Search flights — from a city, to a city (ünïcode).",
        "parameters": {
            "type": "object",
            "properties": {"to": {"type": "string"}, "when": {"type": "string"}},
            "required": ["to"],
        },
    },
}
HISTORY = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": "Fly me to Paris, über schnell. 東京 too?"},
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
    {"role": "tool", "tool_call_id": "c1", "name": "search_for_flights", "content": '{"n": 1.5}'},
    {"role": "assistant", "content": "Thinking aloud.", "tool_calls": []},
]


def _completion(_: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: %d\r\n\r\n%s" % (
        len(COMPLETION),
        COMPLETION,
    )


class Recorder(RawServer):
    """An HTTP/1.1 server on 127.0.0.1 that keeps each request's bytes and answers a completion."""

    def __init__(self) -> None:
        super().__init__(_completion)

    @property
    def base_url(self) -> str:
        return self.url("/v1")


async def _create_bytes(
    recorder: Recorder, request: dict[str, Any], timeout: float, api_key: str | None
) -> bytes:
    """The bytes ``create`` sends for ``request`` (the package's own path, transform and all),
    from a client set up as the model's is (its replies capped: ``Accept-Encoding: identity``)."""
    http_client = openai.DefaultAsyncHttpxClient()
    cap_replies(http_client, DEFAULT_MAX_REPLY_BYTES)
    client = openai.AsyncOpenAI(
        base_url=recorder.base_url,
        api_key=api_key or NO_API_KEY,
        max_retries=0,
        timeout=timeout,
        http_client=http_client,
    )
    try:
        await client.chat.completions.with_raw_response.create(**request, timeout=timeout)
    finally:
        await client.close()
    return recorder.requests[-1]


CASES = [
    pytest.param({}, [SEARCH, FINISH_FUNCTION], "openai", None, id="tools-no-params"),
    pytest.param(
        {"temperature": 0.0, "max_tokens": 256, "seed": 7, "tool_choice": "auto"},
        [SEARCH, FINISH_FUNCTION],
        "openai",
        "sk-test",
        id="sampling-params-and-key",
    ),
    pytest.param({"tool_choice": "auto", "top_p": 0.5}, [], "openai", None, id="no-tools"),
    pytest.param(
        {"temperature": 0.2, "stop": ["\nObservation:"], "extra_headers": {"X-Trace": "t1"}},
        [SEARCH],
        "openai",
        None,
        id="stop-and-extra-headers",
    ),
    pytest.param({"n": 1, "seed": 0}, [SEARCH, FINISH_FUNCTION], "toolbench", None, id="toolbench"),
]


@pytest.mark.parametrize(("params", "tools", "shape", "api_key"), CASES)
async def test_model_sends_the_bytes_create_sends(
    params: dict[str, Any], tools: list[dict[str, Any]], shape: str, api_key: str | None
) -> None:
    """Request line, headers (in order) and body are byte-identical to ``create``'s, twice in a
    row (the second request reuses the remembered shape)."""
    async with Recorder() as recorder:
        model = OpenAICompatModel(
            "rec-model",
            recorder.base_url,
            api_key=api_key,
            params=params,
            timeout=30.0,
            message_shape=shape,  # type: ignore[arg-type]
        )
        try:
            for _ in range(2):
                turn = await model.complete(HISTORY, tools)
                assert turn.content == "Done. é ✓"
                mine = recorder.requests[-1]
                messages = (
                    to_toolbench_messages(HISTORY)
                    if shape == "toolbench"
                    else to_openai_messages(HISTORY)
                )
                request = {**params, "model": "rec-model", "messages": messages}
                if tools:
                    request["tools"] = tools
                else:
                    request.pop("tool_choice", None)
                theirs = await _create_bytes(recorder, request, 30.0, api_key)
                assert mine == theirs
        finally:
            await model.aclose()
    assert len(recorder.requests) == 4


async def test_a_parameter_create_refuses_is_refused_the_same_way() -> None:
    """An unknown request parameter fails as ``create`` fails it (nothing is sent)."""
    async with Recorder() as recorder:
        model = OpenAICompatModel("rec-model", recorder.base_url, params={"no_such_param": 1})
        try:
            with pytest.raises(TypeError, match="no_such_param"):
                await model.complete(HISTORY, [SEARCH])
        finally:
            await model.aclose()
        assert recorder.requests == []
