"""A 5xx the request caused is the request's error (``bad_request``, not retried); a 5xx of the
server's own stays a retried ``server`` error (issue 38, item 11: llama-cpp-python's server
answers 500 to an assistant turn with ``content: null``, and a retry only repeats it)."""

from __future__ import annotations

import pytest

from agents.errors import ModelError
from agents.models.openai_compat import OpenAICompatModel
from agents.models.openai_errors import classify_status
from agents.models.retry import RetryPolicy
from tests.agents.models.openai_server import ScriptedOpenAIServer, error_reply

REQUEST_FAULTS = [
    "7 validation errors:\n  {'type': 'literal_error', 'loc': ('body', 'messages', 1, "
    "'ChatCompletionRequestSystemMessage', 'role'), 'msg': \"Input should be 'system'\"}",
    "1 validation error for CreateChatCompletionRequest",
    "{'loc': ('body', 'tools')}",
    "'dict object' has no attribute 'content'",
    "Tool with name 'get_weather' not found in tools",
    "internal_server_error invalid_request_error",
]
SERVER_FAULTS = ["scripted HTTP 500", "CUDA out of memory", "Bad Gateway", ""]


@pytest.mark.parametrize("text", REQUEST_FAULTS)
@pytest.mark.parametrize("status", [500, 503])
def test_a_5xx_the_request_caused_is_a_bad_request(status: int, text: str) -> None:
    assert classify_status(status, text) == "bad_request"


@pytest.mark.parametrize("text", SERVER_FAULTS)
def test_a_5xx_of_the_server_stays_a_server_error(text: str) -> None:
    assert classify_status(500, text) == "server"


@pytest.mark.parametrize("text", REQUEST_FAULTS[:1] + REQUEST_FAULTS[3:4])
async def test_the_request_s_500_is_raised_at_once(text: str) -> None:
    with ScriptedOpenAIServer() as server:
        server.default = error_reply(500, message=text)
        model = OpenAICompatModel(
            "scripted-model", server.base_url, retry=RetryPolicy(initial=0, jitter=0)
        )
        try:
            with pytest.raises(ModelError) as info:
                await model.complete([{"role": "user", "content": "hi"}], [])
        finally:
            await model.aclose()
        assert len(server.requests) == 1
    assert (info.value.kind, info.value.attempts) == ("bad_request", 1)
