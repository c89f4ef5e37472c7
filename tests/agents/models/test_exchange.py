"""Model exchanges of an external agent: stored as deltas, read back whole, replayed by position.

What it protects: a request stored against the previous one reads back exactly (messages,
tools, parameters); the completion object a turn is served as reads back as the same turn; the
positional replay answers the k-th request with the k-th recorded answer (the response served
at recording time, byte for byte), names the first field of the first request that differs,
refuses a request beyond the recording, and raises a recorded model failure again.
"""

from __future__ import annotations

import asyncio
import json

import pytest

from agents.errors import ModelError, ReplayDivergence
from agents.model import ToolCall, Turn, Usage
from agents.models.exchange import (
    EXCHANGE_RESPONSE,
    ExchangeReplayModel,
    ModelRequest,
    completion_of,
    exchange_record,
    first_difference,
    recorded_requests,
    turn_of,
)
from agents.trajectory import Component, Node, Status, Trajectory

TOOLS = [{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}]
SYSTEM = {"role": "system", "content": "be brief"}
USER = {"role": "user", "content": "what is 2+2?"}
CALL = {
    "role": "assistant",
    "content": None,
    "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "f", "arguments": "{}"}}],
}
RESULT = {"role": "tool", "tool_call_id": "c1", "content": '{"error": "", "response": 4}'}


def _requests() -> list[ModelRequest]:
    return [
        ModelRequest([SYSTEM, USER], TOOLS, {"temperature": 0}),
        ModelRequest([SYSTEM, USER, CALL, RESULT], TOOLS, {"temperature": 0}),
        ModelRequest([USER], [], {}),  # an agent that starts over with no tools
    ]


def _records(requests: list[ModelRequest]) -> list[dict]:
    out, previous = [], None
    for i, request in enumerate(requests):
        turn = Turn(content=f"turn {i}")
        response = completion_of(turn, id=f"chatcmpl-{i}", created=100 + i, model="m")
        out.append(
            exchange_record(i, request, previous, model="m", stream=False, response=response)
        )
        previous = request
    return out


def test_requests_are_stored_as_deltas_and_read_back_whole() -> None:
    requests = _requests()
    records = _records(requests)
    second = records[1]["request"]
    assert second["messages_from"] == 2 and second["messages"] == [CALL, RESULT]
    assert "tools" not in second  # the same as the previous request's
    assert records[2]["request"]["messages_from"] == 0 and records[2]["request"]["tools"] == []
    assert recorded_requests(json.loads(json.dumps(records))) == requests


def test_a_turn_reads_back_from_the_completion_it_is_served_as() -> None:
    turn = Turn(
        content="calling",
        tool_calls=[ToolCall(id="c1", name="f", arguments='{"x": 1}')],
        usage=Usage(prompt_tokens=7, completion_tokens=3),
    )
    completion = completion_of(turn, id="chatcmpl-1", created=5, model="m")
    assert completion["choices"][0]["finish_reason"] == "tool_calls"
    assert completion["usage"] == {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10}
    back = turn_of(completion)
    assert (back.content, back.tool_calls, back.usage) == (
        turn.content,
        turn.tool_calls,
        turn.usage,
    )
    plain = completion_of(Turn(content=None), id="x", created=0, model="m", finish_reason="length")
    assert plain["choices"][0]["message"]["content"] == ""
    assert plain["choices"][0]["finish_reason"] == "length"


def test_first_difference_names_the_field() -> None:
    a, b = _requests()[:2]
    assert first_difference(a, a) is None
    assert first_difference(a, b).startswith("messages (length): recorded 2, got 4")
    edited = ModelRequest([SYSTEM, {"role": "user", "content": "what is 3+3?"}], TOOLS, {})
    assert first_difference(a, edited).startswith("messages[1].content: recorded")
    hotter = ModelRequest(a.messages, a.tools, {"temperature": 1})
    assert first_difference(a, hotter).startswith("params.temperature: recorded 0, got 1")


def _trajectory(records: list[dict]) -> Trajectory:
    nodes = [Node(id=i, parent=i - 1 if i else None, kind="thought") for i in range(len(records))]
    for node in nodes:
        node.usage = Usage(prompt_tokens=1, completion_tokens=1, cost=0.5)
    return Trajectory(
        scenario_id="t",
        agent=Component(name="external"),
        model=Component(name="m"),
        status=Status.answered,
        nodes=nodes,
        exchanges=records,
    )


def test_the_replay_serves_by_position_the_response_as_it_was_served() -> None:
    requests = _requests()
    records = _records(requests)
    model = ExchangeReplayModel(Trajectory.model_validate_json(_trajectory(records).to_json_line()))

    async def ask(request: ModelRequest) -> Turn:
        return await model.complete(request.messages, request.tools, request.params)

    for i, request in enumerate(requests):
        turn = asyncio.run(ask(request))
        assert turn.content == f"turn {i}"
        assert turn.raw == {EXCHANGE_RESPONSE: records[i]["response"]}
        assert turn.usage.cost == 0.5  # the recorded node's usage, cost included
    with pytest.raises(ReplayDivergence, match="model request 4: the recording has 3"):
        asyncio.run(ask(requests[0]))


def test_the_replay_names_the_first_request_that_differs() -> None:
    requests = _requests()
    model = ExchangeReplayModel(_trajectory(_records(requests)))
    asyncio.run(model.complete(requests[0].messages, requests[0].tools, requests[0].params))
    wrong = [SYSTEM, USER, CALL, {**RESULT, "content": "other"}]
    with pytest.raises(ReplayDivergence, match=r"model request 2 of 3: messages\[3\]\.content"):
        asyncio.run(model.complete(wrong, TOOLS, {"temperature": 0}))


def test_a_recorded_model_failure_is_raised_again() -> None:
    request = _requests()[0]
    failed = exchange_record(
        0, request, None, model="m", stream=False, error=ModelError("down", kind="server")
    )
    model = ExchangeReplayModel(_trajectory([failed]))
    with pytest.raises(ModelError) as caught:
        asyncio.run(model.complete(request.messages, request.tools, request.params))
    assert caught.value.kind == "server"
