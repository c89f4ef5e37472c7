"""llama.cpp's tool-calling chat format held to the request's ``max_tokens`` and ``seed``.

What it protects (issue 38, item 12): llama-cpp-python's ``chatml-function-calling`` answers a
request under ``tool_choice: auto`` with completions of its own, made with ``max_tokens=None``
("until the context is full") and without the request's seed; so SmolLM2 wrote tool arguments
for minutes, and the next completion's prompt (the request's plus those arguments) overflowed the
context: "4281 tokens" for a prompt of about 1,350. The launcher runs the server through
``sandbox.models.llamacpp_server``, which gives every such completion the request's bounds. The
real handler runs here on a fake ``Llama`` that records what it is asked (no model is loaded);
it needs llama-cpp-python (the ``local`` extra) and is skipped without it.
"""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import pytest

from sandbox.models.launch import LaunchSpec, server_command
from sandbox.models.llamacpp_server import RequestBound, bounded_handler, chat_format_of

TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "The weather of a city.",
            "parameters": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "required": ["city"],
            },
        },
    }
]
MESSAGES = [
    {"role": "system", "content": "Use the tools."},
    {"role": "user", "content": "The weather in Paris?"},
]
needs_llama = pytest.mark.skipif(
    importlib.util.find_spec("llama_cpp") is None,
    reason="llama-cpp-python is not installed (the 'local' extra: make setup EXTRAS=dev,local)",
)


class FakeLlama:
    """Answers the handler's completions in turn and records the keyword arguments of each."""

    verbose = False

    def __init__(self, texts: list[str]) -> None:
        self.texts = list(texts)
        self.asked: list[dict[str, Any]] = []
        self.events: list[str] = []

    def reset(self) -> None:
        self.events.append("reset")

    def create_completion(self, **kwargs: Any) -> dict[str, Any]:
        self.asked.append(kwargs)
        self.events.append("complete")
        text = self.texts.pop(0)
        return {
            "id": f"cmpl-{len(self.asked)}",
            "object": "text_completion",
            "created": 0,
            "model": "fake",
            "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13},
        }


def _handler() -> Any:
    from llama_cpp import llama_chat_format

    return llama_chat_format.get_chat_completion_handler("chatml-function-calling")


def _tool_call(handler: Any, llama: FakeLlama, **request: Any) -> dict[str, Any]:
    answer: dict[str, Any] = handler(
        llama=llama, messages=MESSAGES, tools=TOOLS, tool_choice="auto", **request
    )
    return answer


CALL_TEXTS = ["functions.get_weather", '{"city": "Paris"}', "<|im_end|>"]
"""The handler's three completions for one call: which comes first, the arguments, what next."""


@needs_llama
def test_the_server_s_own_handler_drops_the_request_s_bounds() -> None:
    """The cause, as llama-cpp-python ships it: what the bounded handler exists for."""
    llama = FakeLlama(CALL_TEXTS)
    _tool_call(_handler(), llama, max_tokens=192, seed=7)
    assert [a.get("max_tokens") for a in llama.asked] == [None, None, None]
    assert [a.get("seed") for a in llama.asked] == [None, None, None]
    assert "reset" not in llama.events  # the previous request's cached prefix is reused


@needs_llama
def test_every_completion_of_a_tool_call_gets_the_request_s_max_tokens_and_seed() -> None:
    llama = FakeLlama(CALL_TEXTS)
    answer = _tool_call(bounded_handler(_handler()), llama, max_tokens=192, seed=7)
    # the first, the grammar's choice of "message" or a function, is ended by its grammar
    assert [a["max_tokens"] for a in llama.asked] == [None, 192, 192]
    assert [a["seed"] for a in llama.asked] == [7, 7, 7]
    # the prompt evaluated afresh once per request: not the previous request's cached prefix
    assert llama.events == ["reset", "complete", "complete", "complete"]
    (call,) = answer["choices"][0]["message"]["tool_calls"]
    assert call["function"] == {"name": "get_weather", "arguments": '{"city": "Paris"}'}


@needs_llama
def test_a_message_reply_is_bounded_too() -> None:
    llama = FakeLlama(["message", "It is sunny."])
    answer = _tool_call(bounded_handler(_handler()), llama, max_tokens=64, seed=3)
    assert answer["choices"][0]["message"]["content"] == "It is sunny."
    assert [(a["max_tokens"], a["seed"]) for a in llama.asked] == [(None, 3), (64, 3)]


@needs_llama
def test_a_request_without_bounds_is_left_as_the_server_would_take_it() -> None:
    llama = FakeLlama(CALL_TEXTS)
    _tool_call(bounded_handler(_handler()), llama)
    assert [a.get("max_tokens") for a in llama.asked] == [None, None, None]
    assert [a.get("seed") for a in llama.asked] == [None, None, None]


def test_a_bound_the_handler_sets_itself_wins() -> None:
    llama = FakeLlama(["x", "y"])
    bound = RequestBound(llama, max_tokens=192, seed=7)
    bound.create_completion(prompt="p", max_tokens=1, seed=2)
    bound.create_completion(prompt="p")
    assert [(a["max_tokens"], a["seed"]) for a in llama.asked] == [(1, 2), (192, 7)]
    free = FakeLlama(["x", "y"])
    first = RequestBound(free, max_tokens=192, seed=7, free_first=True)
    first.create_completion(prompt="p")
    first.create_completion(prompt="p")
    assert [(a.get("max_tokens"), a["seed"]) for a in free.asked] == [(None, 7), (192, 7)]
    assert free.events == ["reset", "complete", "complete"]
    assert bound.verbose is False  # everything else is the Llama's


def test_the_launcher_runs_llamacpp_through_the_bounded_server(tmp_path: Any) -> None:
    gguf = tmp_path / "m.gguf"
    gguf.write_bytes(b"GGUF")
    launch = LaunchSpec(server="llamacpp", gguf=str(gguf), chat_format="chatml-function-calling")
    argv = server_command(launch, "small", "127.0.0.1", 9)
    assert argv[:3] == [sys.executable, "-m", "sandbox.models.llamacpp_server"]
    assert chat_format_of(argv) == "chatml-function-calling"
    assert chat_format_of(["--chat_format=chatml"]) == "chatml"
    assert chat_format_of(["--model", "m.gguf", "--chat_format"]) is None
