"""The model proxy's wire (``sandbox.external.proxy``), each rule against a plausible slip.

What it protects:
- a streamed turn with several tool calls reaches the agent as that many calls: each call's
  chunk carries its own index, which is how a client (the OpenAI SDKs, LangChain) tells calls
  apart when it joins the deltas;
- the fields that only shape the transport (``stream``, ``stream_options``, ``n``, ``model``)
  never reach the model call as parameters; the others do;
- ``n`` of 1 (or none) is accepted; any other ``n`` is refused, naming ``n``.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.models.exchange import ModelRequest
from sandbox.external.proxy import BadRequest, model_request, stream_chunks

MESSAGES = [{"role": "user", "content": "kettles?"}]


def _completion(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    tool_calls = [
        {"id": f"c{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
        for i, (n, a) in enumerate(calls)
    ]
    return {
        "id": "chatcmpl-1",
        "created": 0,
        "model": "m",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": tool_calls},
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5},
    }


def _joined(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The tool calls a client builds from the deltas: one per index, pieces appended."""
    calls: dict[int, dict[str, Any]] = {}
    for c in chunks:
        for choice in c["choices"]:
            for delta in choice["delta"].get("tool_calls") or []:
                call = calls.setdefault(delta["index"], {"id": "", "name": "", "arguments": ""})
                call["id"] += delta.get("id") or ""
                call["name"] += delta["function"].get("name") or ""
                call["arguments"] += delta["function"].get("arguments") or ""
    return [calls[i] for i in sorted(calls)]


def test_a_streamed_turn_with_two_tool_calls_reaches_the_agent_as_two() -> None:
    completion = _completion(("search", {"q": "kettle"}), ("price", {"id": "K-1"}))
    chunks = stream_chunks(completion, include_usage=False)
    assert _joined(chunks) == [
        {"id": "c0", "name": "search", "arguments": '{"q": "kettle"}'},
        {"id": "c1", "name": "price", "arguments": '{"id": "K-1"}'},
    ]
    assert chunks[-1]["choices"][0]["finish_reason"] == "tool_calls"
    assert "usage" not in chunks[-1]
    with_usage = stream_chunks(completion, include_usage=True)
    assert with_usage[-1]["usage"]["total_tokens"] == 5 and with_usage[-1]["choices"] == []


def test_transport_fields_are_not_model_parameters() -> None:
    body = {
        "model": "anything",
        "messages": MESSAGES,
        "stream": True,
        "stream_options": {"include_usage": True},
        "n": 1,
        "temperature": 0.2,
        "seed": 7,
    }
    request = model_request(body)
    assert isinstance(request, ModelRequest)
    assert request.params == {"temperature": 0.2, "seed": 7}
    assert request.messages == MESSAGES and request.tools == []


@pytest.mark.parametrize("n", [None, 1])
def test_one_choice_is_accepted(n: int | None) -> None:
    body: dict[str, Any] = {"messages": MESSAGES}
    if n is not None:
        body["n"] = n
    request = model_request(body)
    assert isinstance(request, ModelRequest) and "n" not in request.params


@pytest.mark.parametrize("n", [0, 2, "1"])
def test_other_choice_counts_are_refused_naming_n(n: Any) -> None:
    refused = model_request({"messages": MESSAGES, "n": n})
    assert isinstance(refused, BadRequest) and refused.param == "n"
    assert "n must be 1" in refused.message
