"""Text-ReAct parsing and the adapter around a text-only model."""

from __future__ import annotations

import json
from typing import Any

import pytest

from agents.model import CUT_AT_TOKEN_LIMIT, Message, Turn, Usage
from agents.models import TextReActModel
from agents.models.text_react import TextFormatError, parse_react, to_text_messages
from agents.toolenv import FINISH_FUNCTION

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather_for_weatherapi",
        "description": "Current weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
        },
    },
}
TOOLS = [WEATHER, FINISH_FUNCTION]


class TextModel:
    """A text-only model that answers from a list and records what it was sent."""

    name = "text"

    def __init__(self, answers: list[str]) -> None:
        self.answers = list(answers)
        self.seen: list[tuple[list[Message], list[dict[str, Any]]]] = []

    async def complete(self, messages, tools, params=None) -> Turn:
        self.seen.append((messages, tools))
        return Turn(content=self.answers.pop(0), usage=Usage(prompt_tokens=7, completion_tokens=3))


def test_well_formed() -> None:
    p = parse_react(
        "Thought: I need the weather.\nAction: get_weather_for_weatherapi\n"
        'Action Input: {"city": "Paris"}'
    )
    assert p.thought == "I need the weather."
    assert p.name == "get_weather_for_weatherapi"
    assert p.arguments == '{"city": "Paris"}'


def test_extra_prose_around_is_ignored() -> None:
    text = (
        "Sure! Let me help.\nThought: look it up\n\nAction: `get_weather_for_weatherapi`\n"
        'Action Input: here you go {"city": "Paris", "note": "a } in a string"} hope this helps\n'
        "Observation: (the model hallucinated one)\nAction: other\nAction Input: {}"
    )
    p = parse_react(text)
    assert p.name == "get_weather_for_weatherapi"
    assert json.loads(p.arguments) == {"city": "Paris", "note": "a } in a string"}


def test_python_literal_input_becomes_json() -> None:
    p = parse_react("Action: f\nAction Input: {'city': 'Paris', 'metric': True, 'x': None}")
    assert json.loads(p.arguments) == {"city": "Paris", "metric": True, "x": None}


def test_trailing_comma_is_a_valid_python_literal() -> None:
    assert (
        parse_react('Action: f\nAction Input: {"city": "Paris",}').arguments == '{"city": "Paris"}'
    )


def test_no_thought_is_fine() -> None:
    p = parse_react("action: f\naction input: {}")
    assert p.thought is None and p.name == "f" and p.arguments == "{}"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('Thought: hmm\nAction: f\nAction Input: {"city": Paris}', "not valid JSON"),
        ('Action: f\nAction Input: {"city": "Par', "JSON object in braces"),
        ("Thought: hmm\nAction: f", "no 'Action Input:'"),
        ("The weather is nice.", "no 'Action:'"),
        ("Action:\nAction Input: {}", "names no function"),
        ("Action: f\nAction Input:   ", "is empty"),
        ("Action: f\nAction Input: [1, 2]", "JSON object in braces"),
        ("Action: f\nAction Input: {__import__('os').system('true')}", "not valid JSON"),
    ],
)
def test_malformed(text: str, reason: str) -> None:
    with pytest.raises(TextFormatError, match=reason.replace("(", r"\(")):
        parse_react(text)


async def test_adapter_returns_native_call_and_sends_no_tools() -> None:
    inner = TextModel(
        [
            "Thought: weather first\nAction: get_weather_for_weatherapi\n"
            'Action Input: {"city": "Oslo"}'
        ]
    )
    model = TextReActModel(inner)
    turn = await model.complete(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Oslo?"},
        ],
        TOOLS,
    )
    assert turn.format_error is None
    assert turn.content == "weather first"
    assert [(c.id, c.name, c.arguments) for c in turn.tool_calls] == [
        ("call_0", "get_weather_for_weatherapi", '{"city": "Oslo"}')
    ]
    assert turn.usage.prompt_tokens == 7
    sent, sent_tools = inner.seen[0]
    assert sent_tools == []
    assert sent[0]["role"] == "system" and sent[0]["content"].startswith("Be brief.")
    assert "get_weather_for_weatherapi" in sent[0]["content"] and "Finish" in sent[0]["content"]
    assert "Action Input:" in sent[0]["content"]


async def test_adapter_hallucinated_tool_is_parsed_not_an_error() -> None:
    inner = TextModel(["Thought: t\nAction: book_hotel_for_expedia\nAction Input: {}"])
    turn = await TextReActModel(inner).complete([{"role": "user", "content": "q"}], TOOLS)
    assert turn.format_error is None
    assert turn.tool_calls[0].name == "book_hotel_for_expedia"


async def test_adapter_malformed_turn_keeps_raw_text() -> None:
    raw = "Thought: t\nAction: get_weather_for_weatherapi\nAction Input: {city: Paris}"
    turn = await TextReActModel(TextModel([raw])).complete(
        [{"role": "user", "content": "q"}], TOOLS
    )
    assert turn.tool_calls == []
    assert turn.content == raw
    assert "not valid JSON" in (turn.format_error or "")
    assert turn.usage.completion_tokens == 3


def test_history_is_rewritten_as_text() -> None:
    history: list[Message] = [
        {"role": "user", "content": "Weather in Oslo and Rome?"},
        {
            "role": "assistant",
            "content": "two cities",
            "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "w", "arguments": '{"c": 1}'}},
                {"id": "b", "type": "function", "function": {"name": "w", "arguments": '{"c": 2}'}},
            ],
        },
        {"role": "tool", "tool_call_id": "a", "name": "w", "content": "sunny"},
        {"role": "tool", "tool_call_id": "b", "name": "w", "content": "rainy"},
        {"role": "assistant", "content": "garbage"},
        {"role": "user", "content": "Your answer was not in the format."},
    ]
    out = to_text_messages(history, TOOLS)
    assert [m["role"] for m in out] == ["system", "user", "assistant", "user", "assistant", "user"]
    assert out[2]["content"] == (
        'Thought: two cities\nAction: w\nAction Input: {"c": 1}\nAction: w\nAction Input: {"c": 2}'
    )
    assert out[3]["content"] == "Observation: sunny\nObservation: rainy"
    assert all("tool_calls" not in m and "tool_call_id" not in m for m in out)
    assert parse_react(out[2]["content"]).arguments == '{"c": 1}'


async def test_call_ids_continue_after_history() -> None:
    history: list[Message] = [
        {"role": "user", "content": "q"},
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {"id": "call_0", "type": "function", "function": {"name": "w", "arguments": "{}"}}
            ],
        },
        {"role": "tool", "tool_call_id": "call_0", "content": "x"},
    ]
    turn = await TextReActModel(TextModel(["Action: w\nAction Input: {}"])).complete(history, TOOLS)
    assert turn.tool_calls[0].id == "call_1"


class CutModel:
    """A text-only model whose endpoint cut every reply at max_tokens."""

    name = "cut"

    def __init__(self, text: str) -> None:
        self.text = text

    async def complete(self, messages, tools, params=None) -> Turn:
        cut = f"{CUT_AT_TOKEN_LIMIT} before any function call: answer shorter, with one call"
        return Turn(content=self.text, format_error=cut)


async def test_a_cut_reply_says_it_was_cut_unless_its_action_was_complete() -> None:
    unparsed = await TextReActModel(CutModel("Thought: I should look up the weather in")).complete(
        [{"role": "user", "content": "Weather in Paris?"}], TOOLS
    )
    assert unparsed.format_error is not None
    assert unparsed.format_error.startswith(CUT_AT_TOKEN_LIMIT + ": no 'Action:' line found")
    whole = (
        'Thought: weather\nAction: get_weather_for_weatherapi\nAction Input: {"city": "Paris"}\n'
    )
    parsed = await TextReActModel(CutModel(whole + "Observation: it is sunny and the")).complete(
        [{"role": "user", "content": "Weather in Paris?"}], TOOLS
    )
    assert parsed.format_error is None
    assert parsed.tool_calls[0].arguments == '{"city": "Paris"}'
