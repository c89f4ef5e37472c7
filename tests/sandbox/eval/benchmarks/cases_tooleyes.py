"""ToolEyes' cases: conversations with their rule-based scores worked by hand from its code.

Pure data (standard library only), read by the tests beside it and by a cross-check that runs
ToolEyes' own ``Format_alignment_score`` and ``Tool_selection_score`` outside the project. A
conversation starts with the system message holding the tool document and the query; the
helpers below write assistant replies in ToolEyes' ReAct format.
"""

from __future__ import annotations

from typing import Any

DOC: list[dict[str, Any]] = [
    {
        "name": "get",
        "description": "Weather of a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
    {
        "name": "book",
        "description": "Book a room.",
        "parameters": {
            "type": "object",
            "properties": {"id": {"type": "string"}},
            "required": ["id"],
        },
    },
]
SYSTEM = {
    "from": "system",
    "value": "Answer with tools. Specifically, you have access of the following tools:\n"
    + repr(DOC)
    + "\nLet's Begin!",
}
QUERY = {"from": "user", "value": "What is the weather in Paris?"}


def say(action: str, action_input: str, thought: str = "I look it up.") -> dict[str, str]:
    return {
        "from": "assistant",
        "value": f"Thought: {thought}\nAction: {action}\nAction Input: {action_input}",
    }


def text(value: str) -> dict[str, str]:
    return {"from": "assistant", "value": value}


def fn(value: str = '{"temp": 20}') -> dict[str, str]:
    return {"from": "function", "value": value}


def user(value: str = "Please follow the format.") -> dict[str, str]:
    return {"from": "user", "value": value}


def conv(*messages: dict[str, str]) -> list[dict[str, str]]:
    return [SYSTEM, QUERY, *messages]


OK = say("get", "{'city': 'Paris'}")
OK2 = say("get", "{'city': 'Rome', 'days': 2}")
BOOK = say("book", "{'id': '7'}")
FIN = say("finish", '{"answer": "20 degrees"}', thought="I have it.")
FIN_FREE = say("finish", "It is 20 degrees.", thought="I have it.")
# ToolEyes' forced endings are recognised by these phrases (worded here for the tests)
TOO_MANY = say(
    "finish",
    '{"answer": "I cannot handle the task."}',
    thought="Stopped after trying too many times.",
)
EXEC_ERR = say(
    "finish",
    '{"answer": "I cannot handle the task."}',
    thought="During execution, an error occurs.",
)

# (case, conversation, IF, answer_pass, neat_json_err, neat_react_err)
FORMAT_CASES: list[tuple[str, list[dict[str, str]], float, int, float, float]] = [
    ("call then finish", conv(OK, fn(), FIN), 2 / 2, 1, 0, 0),
    ("no react first", conv(text("I will call get."), user(), OK, fn(), FIN), 2 / 3, 1, 0, 0),
    # eval() of {'city': true}: true is no Python name
    ("json true", conv(say("get", "{'city': true}"), user(), FIN), 1 / 2, 1, 1 / 2, 0),
    ("json null", conv(say("get", '{"city": null}'), user(), FIN), 1 / 2, 1, 1 / 2, 0),
    ("python true", conv(say("get", "{'city': 'Paris', 'x': True}"), fn(), FIN), 2 / 2, 1, 0, 0),
    ("forced ending", conv(OK, fn(), TOO_MANY), 1 / 2, 0, 0, 0),
    ("execution error ending", conv(OK, fn(), EXEC_ERR), 1 / 2, 0, 0, 0),
    ("free text final answer", conv(OK, fn(), FIN_FREE), 2 / 2, 1, 1 / 2, 0),
    ("final not react", conv(OK, fn(), text("It is 20 degrees.")), 1 / 2, 1, 0, 0),
    # the same text as the last message is final wherever it is
    ("repeated final text", conv(OK, fn(), OK), 2 / 2, 1, 0, 0),
    ("no assistant reply", conv(), 0, 1, 0, 0),
    # an empty action fails ReAct; the input alone evaluates
    ("empty action", conv(say("", "{}"), user(), FIN), 1 / 2, 1, 0, 1 / 2),
    (
        "no thought label",
        conv(text("Action: get\nAction Input: {'city': 'Paris'}"), user(), FIN),
        1 / 2,
        1,
        0,
        0,
    ),
    (
        "thought after action",
        conv(text("Action: get\nThought: t\nAction Input: {}"), user(), FIN),
        1 / 2,
        1,
        0,
        0,
    ),
    (
        "literal backslash-n in action",
        conv(say("get\\n", "{'city': 'Paris'}"), fn(), FIN),
        2 / 2,
        1,
        0,
        0,
    ),
    (
        "observation after input",
        conv(say("get", "{'city': 'Paris'}\nObservation: 20"), fn(), FIN),
        1 / 2,
        1,
        1 / 2,
        0,
    ),
    ("a tuple input", conv(say("get", "('Paris',)"), fn(), FIN), 2 / 2, 1, 0, 0),
    ("arithmetic input", conv(say("get", "{'days': 1 + 1}"), fn(), FIN), 2 / 2, 1, 0, 0),
    ("None input", conv(say("get", "None"), fn(), FIN), 2 / 2, 1, 0, 0),
    (
        "several lines of thought",
        conv(say("get", "{'city': 'Paris'}", thought="a\nb\nc"), fn(), FIN),
        2 / 2,
        1,
        0,
        0,
    ),
    ("three calls", conv(OK, fn(), OK2, fn(), BOOK, fn(), FIN), 4 / 4, 1, 0, 0),
    # not the last message: scored as any other reply, and well-formed
    ("forced text not last", conv(TOO_MANY, user(), FIN), 2 / 2, 1, 0, 0),
    ("ends on an observation", conv(OK, fn()), 1 / 1, 1, 0, 0),
    ("empty input", conv(say("get", ""), user(), FIN), 1 / 2, 1, 1 / 2, 0),
    (
        "lower-case labels",
        conv(text("thought: t\naction: get\naction input: {}"), user(), FIN),
        1 / 2,
        1,
        0,
        0,
    ),
    (
        "space before colon",
        conv(text("Thought : t\nAction: get\nAction Input: {}"), user(), FIN),
        1 / 2,
        1,
        0,
        0,
    ),
    ("json false", conv(say("get", '{"city": false}'), user(), FIN), 1 / 2, 1, 1 / 2, 0),
    (
        "nested input",
        conv(say("get", "{'city': 'Paris', 'f': {'a': [1, 2]}}"), fn(), FIN),
        2 / 2,
        1,
        0,
        0,
    ),
    ("two bad replies", conv(text("hmm"), user(), text("still thinking")), 0 / 2, 1, 0, 0),
    ("only a final answer", conv(FIN), 1 / 1, 1, 0, 0),
    ("forced ending alone", conv(TOO_MANY), 0 / 1, 0, 0, 0),
    ("unbalanced input", conv(say("get", "{'city': 'Paris'"), user(), FIN), 1 / 2, 1, 1 / 2, 0),
]

# (case, conversation, tool reality)
REALITY_CASES: list[tuple[str, list[dict[str, str]], float]] = [
    ("one good call", conv(OK, fn(), FIN), 1 - 0 / 1),
    ("unknown tool", conv(say("fly", "{'to': 'Rome'}"), fn(), FIN), 1 - 1 / 1),
    ("required missing", conv(say("get", "{'days': 2}"), fn(), FIN), 1 - 1 / 1),
    ("unknown parameter", conv(say("get", "{'city': 'Paris', 'zoom': 1}"), fn(), FIN), 1 - 1 / 1),
    ("both errors count once", conv(say("get", "{'zoom': 1}"), fn(), FIN), 1 - 1 / 1),
    ("one of two wrong", conv(OK, fn(), say("book", "{}"), fn(), FIN), 1 - 1 / 2),
    # after a hallucinated tool no parameters are checked: the missing city is not counted
    (
        "checks stop after a hallucination",
        conv(say("fly", "{}"), fn(), say("get", "{'days': 2}"), fn(), FIN),
        1 - 1 / 2,
    ),
    # the city given once leaves the required list: the second call passes without it
    ("required given once", conv(OK, fn(), say("get", "{'days': 2}"), fn(), FIN), 1 - 0 / 2),
    ("only a final answer", conv(FIN), 0),
    ("no reply", conv(), 0),
    ("bad input not checked", conv(say("get", "{'city': true}"), user(), OK, fn(), FIN), 1 - 0 / 1),
    ("forced ending not checked", conv(OK, fn(), TOO_MANY), 1 - 0 / 1),
    ("no react not checked", conv(text("hmm"), user(), OK, fn(), FIN), 1 - 0 / 1),
    ("other tool", conv(BOOK, fn(), FIN), 1 - 0 / 1),
    ("book without id", conv(say("book", "{}"), fn(), FIN), 1 - 1 / 1),
    ("book with unknown", conv(say("book", "{'id': '7', 'night': 2}"), fn(), FIN), 1 - 1 / 1),
    ("three good", conv(OK, fn(), OK2, fn(), BOOK, fn(), FIN), 1 - 0 / 3),
    ("hallucination last", conv(OK, fn(), BOOK, fn(), say("fly", "{}"), fn(), FIN), 1 - 1 / 3),
    ("two hallucinations", conv(say("fly", "{}"), fn(), say("swim", "{}"), fn(), FIN), 1 - 2 / 2),
    ("case differs", conv(say("Get", "{'city': 'Paris'}"), fn(), FIN), 1 - 1 / 1),
    ("padded action", conv(say("  get  ", "{'city': 'Paris'}"), fn(), FIN), 1 - 0 / 1),
    ("repeated final text excluded", conv(OK, fn(), OK), 0),
    ("finish not last is a hallucination", conv(FIN, user(), OK, fn(), FIN_FREE), 1 - 1 / 2),
    ("ends on an observation", conv(OK, fn()), 1 - 0 / 1),
    ("empty input object", conv(say("get", "{}"), fn(), FIN), 1 - 1 / 1),
    # a non-object input after a hallucination is never read for keys
    (
        "non-object after hallucination",
        conv(say("fly", "{}"), fn(), say("get", "('Paris',)"), fn(), FIN),
        1 - 1 / 2,
    ),
    (
        "book then get missing city",
        conv(BOOK, fn(), say("get", "{'days': 1}"), fn(), FIN),
        1 - 1 / 2,
    ),
    ("get twice both good", conv(OK, fn(), OK2, fn(), FIN), 1 - 0 / 2),
    (
        "unknown then required given",
        conv(say("get", "{'city': 'P', 'x': 1}"), fn(), say("get", "{'days': 1}"), fn(), FIN),
        1 - 1 / 2,
    ),
    ("arithmetic input", conv(say("get", "{'city': 'Pa' + 'ris'}"), fn(), FIN), 1 - 0 / 1),
    ("nested value", conv(say("get", "{'city': {'name': 'Paris'}}"), fn(), FIN), 1 - 0 / 1),
]

# ToolEyes' code raises on these (``params.keys()`` of a non-object input): no value
REALITY_NO_VALUE: list[tuple[str, list[dict[str, str]]]] = [
    ("tuple input", conv(say("get", "('Paris',)"), fn(), FIN)),
    ("None input", conv(say("get", "None"), fn(), FIN)),
]
