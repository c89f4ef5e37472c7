"""The model proxy's wire (``sandbox.external.proxy``), each rule against a plausible slip.

What it protects:
- a streamed turn with several tool calls reaches the agent as that many calls: each call's
  chunk carries its own index, which is how a client (the OpenAI SDKs, LangChain) tells calls
  apart when it joins the deltas;
- the fields that only shape the transport (``stream``, ``stream_options``, ``n``, ``model``)
  never reach the model call as parameters; the others do;
- ``n`` of 1 (or none) is accepted; any other ``n`` is refused, naming ``n``;
- a malformed request is refused with the field it names and why, as an OpenAI error body;
- the stream is OpenAI's ``chat.completion.chunk`` objects as server-sent events (UTF-8 text as
  it is), ending ``[DONE]``; ``/v1/models`` lists the one model.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.models.exchange import ModelRequest
from sandbox.external.proxy import (
    BadRequest,
    error_body,
    include_usage,
    model_request,
    models_list,
    sse_events,
    stream_chunks,
)

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
    assert refused == BadRequest("this proxy answers one choice per request: n must be 1", "n")


@pytest.mark.parametrize(
    ("body", "message", "param"),
    [
        ([], "the request body must be a JSON object", None),
        ({}, "messages must be a non-empty array of messages", "messages"),
        ({"messages": []}, "messages must be a non-empty array of messages", "messages"),
        ({"messages": "hi"}, "messages must be a non-empty array of messages", "messages"),
        (
            {"messages": [{"content": "hi"}]},
            "messages[0] must be an object with a role",
            "messages",
        ),
        ({"messages": ["hi"]}, "messages[0] must be an object with a role", "messages"),
        ({"messages": MESSAGES, "tools": {}}, "tools must be an array of tool objects", "tools"),
        ({"messages": MESSAGES, "tools": ["t"]}, "tools must be an array of tool objects", "tools"),
    ],
)
def test_a_malformed_request_is_refused_naming_the_field_and_why(
    body: Any, message: str, param: str | None
) -> None:
    assert model_request(body) == BadRequest(message, param)


def test_tools_given_are_kept_and_none_is_no_tools() -> None:
    tool = {"type": "function", "function": {"name": "search", "parameters": {}}}
    request = model_request({"messages": MESSAGES, "tools": [tool]})
    assert isinstance(request, ModelRequest) and request.tools == [tool]
    none = model_request({"messages": MESSAGES, "tools": None})
    assert isinstance(none, ModelRequest) and none.tools == [] and none.params == {}


@pytest.mark.parametrize(
    ("status", "kind"),
    [
        (400, "invalid_request_error"),
        (404, "not_found_error"),
        (429, "insufficient_quota"),
        (500, "server_error"),
        (501, "server_error"),
        (502, "server_error"),
        (503, "server_error"),
    ],
)
def test_errors_are_openai_error_bodies(status: int, kind: str) -> None:
    assert error_body(status, "budget_exhausted", "spent", "n") == {
        "error": {"message": "spent", "type": kind, "param": "n", "code": "budget_exhausted"}
    }
    assert error_body(status, "c", "m")["error"]["param"] is None


def test_the_model_list_names_the_one_model() -> None:
    assert models_list("smollm2") == {
        "object": "list",
        "data": [{"id": "smollm2", "object": "model", "created": 0, "owned_by": "agent-sandbox"}],
    }


def test_a_text_turn_streams_as_openai_chunks_and_server_sent_events() -> None:
    completion = _completion()
    completion["choices"][0]["message"] = {"role": "assistant", "content": "Zürich, 3 °C"}
    completion["choices"][0]["finish_reason"] = None
    chunks = stream_chunks(completion, include_usage=True)
    head = {"id": "chatcmpl-1", "created": 0, "model": "m", "object": "chat.completion.chunk"}

    def choice(delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
        one = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return {**head, "choices": [one]}

    usage = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
    assert chunks == [
        choice({"role": "assistant", "content": "Zürich, 3 °C"}, None),
        choice({}, "stop"),  # no finish reason recorded: a text turn stopped
        {**head, "choices": [], "usage": usage},
    ]
    events = list(sse_events(chunks))
    assert events[0] == b"data: " + json.dumps(chunks[0], ensure_ascii=False).encode() + b"\n\n"
    assert "Zürich, 3 °C".encode() in events[0]  # UTF-8 as it is, not \\u escapes
    assert events[-1] == b"data: [DONE]\n\n" and len(events) == len(chunks) + 1


@pytest.mark.parametrize(
    ("body", "wanted"),
    [
        ({"stream_options": {"include_usage": True}}, True),
        ({"stream_options": {"include_usage": "yes"}}, False),
        ({"stream_options": None}, False),
        ({}, False),
        (["stream_options"], False),
    ],
)
def test_the_usage_chunk_comes_only_when_asked_for(body: Any, wanted: bool) -> None:
    assert include_usage(body) is wanted
