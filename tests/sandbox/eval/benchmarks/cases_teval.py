"""T-Eval's cases: inputs of its evaluators with the values worked by hand from its code.

Pure data (standard library only), read by the tests beside it and by a cross-check that runs
T-Eval's own evaluator code on the same inputs outside the project. ``E`` is T-Eval's 1e-5 in the
understand denominator; cosines are those of ``token_cosine``'s word-count encoder.
"""

from __future__ import annotations

import json
import math
from typing import Any

E = 1e-5

# -- instruct (InstructEvaluator)
# (case, format, prediction, gold action, gold args, expected format, expected args_em)

JSON_TEMPLATE = {"thought": "thought", "action": "name", "args": "args"}
STR_TEMPLATE = {
    "thought_start": "Thought:",
    "thought_end": "\n",
    "action_start": "Action:",
    "action_end": "\n",
    "args_start": "Action Input:",
    "args_end": "",
}


def reply(name: str, args: str, thought: str = "t") -> str:
    return f'{{"thought": "{thought}", "name": "{name}", "args": {args}}}'


# (case, format, prediction, gold action, gold args, expected format, expected args_em)
INSTRUCT_CASES: list[tuple[str, str, Any, str, dict[str, Any], float, float]] = [
    ("perfect", "json", reply("get", '{"city": "Paris"}'), "get", {"city": "Paris"}, 1, 2 / 2),
    ("wrong name", "json", reply("put", '{"city": "Paris"}'), "get", {"city": "Paris"}, 1, 1 / 2),
    ("wrong value", "json", reply("get", '{"city": "Rome"}'), "get", {"city": "Paris"}, 1, 1 / 2),
    ("one of two", "json", reply("get", '{"a": 1, "b": 3}'), "get", {"a": 1, "b": 2}, 1, 2 / 3),
    ("key missing", "json", reply("get", "{}"), "get", {"city": "Paris"}, 1, 1 / 2),
    # a gold value "" matches a key the prediction lacks (pred_args.get(key, ""))
    ("empty gold value", "json", reply("get", "{}"), "get", {"note": ""}, 1, 2 / 2),
    ("extra key ignored", "json", reply("get", '{"a": 1, "b": 2}'), "get", {"a": 1}, 1, 2 / 2),
    ("int vs float", "json", reply("get", '{"n": 1.0}'), "get", {"n": 1}, 1, 2 / 2),
    ("bool vs int", "json", reply("get", '{"flag": 1}'), "get", {"flag": True}, 1, 2 / 2),
    ("string vs number", "json", reply("get", '{"n": "5"}'), "get", {"n": 5}, 1, 1 / 2),
    (
        "nested equal",
        "json",
        reply("get", '{"f": {"a": [1, 2]}}'),
        "get",
        {"f": {"a": [1, 2]}},
        1,
        1,
    ),
    ("nested order", "json", reply("get", '{"f": [2, 1]}'), "get", {"f": [1, 2]}, 1, 1 / 2),
    ("empty gold args", "json", reply("get", '{"x": 1}'), "get", {}, 1, 1 / 1),
    ("empty gold, wrong name", "json", reply("put", "{}"), "get", {}, 1, 0 / 1),
    ("not json", "json", "I would call get.", "get", {"city": "Paris"}, 0, 0),
    ("no args key", "json", '{"thought": "t", "name": "get"}', "get", {"a": 1}, 0, 0),
    ("no thought key", "json", '{"name": "get", "args": {"a": 1}}', "get", {"a": 1}, 0, 0),
    ("args a list", "json", reply("get", "[1, 2]"), "get", {"a": 1}, 1, 1 / 2),
    ("args a string", "json", reply("get", '"a=1"'), "get", {"a": 1, "b": 2}, 1, 1 / 3),
    (
        "python literal",
        "json",
        "{'thought': 't', 'name': 'get', 'args': {'a': 1}}",
        "get",
        {"a": 1},
        1,
        2 / 2,
    ),
    # true/null: literal_eval fails, json.loads reads them
    (
        "json constants",
        "json",
        reply("get", '{"a": true, "b": null}'),
        "get",
        {"a": True, "b": None},
        1,
        3 / 3,
    ),
    ("fenced", "json", "```json\n" + reply("get", '{"a": 1}') + "\n```", "get", {"a": 1}, 1, 2 / 2),
    ("a list reply", "json", '[{"name": "get"}]', "get", {"a": 1}, 0, 0),
    (
        "already a dict",
        "json",
        {"thought": "", "name": "get", "args": {"a": 2}},
        "get",
        {"a": 1},
        1,
        1 / 2,
    ),
    ("name case", "json", reply("Get", '{"a": 1}'), "get", {"a": 1}, 1, 1 / 2),
    ("same float", "json", reply("get", '{"x": 0.10000000000000001}'), "get", {"x": 0.1}, 1, 2 / 2),
    ("escaped underscore", "json", reply("get", '{"q": "a\\\\_b"}'), "get", {"q": "a_b"}, 1, 1 / 2),
    (
        "unicode escape",
        "json",
        reply("get", '{"city": "Z\\u00fcrich"}'),
        "get",
        {"city": "Zürich"},
        1,
        2 / 2,
    ),
    ("apostrophe", "json", reply("get", '{"a": "x"}', thought="it's"), "get", {"a": "x"}, 1, 2 / 2),
    ("trailing text", "json", reply("get", "{}") + " thanks", "get", {}, 0, 0),
    # single quotes swapped for double ones: the third reader
    (
        "quote swap",
        "json",
        "{'thought': 't', 'name': 'get', 'args': {'a': true}}",
        "get",
        {"a": True},
        1,
        2 / 2,
    ),
    (
        "three keys, none",
        "json",
        reply("get", '{"a": 0, "b": 0, "c": 0}'),
        "get",
        {"a": 1, "b": 2, "c": 3},
        1,
        1 / 4,
    ),
    (
        "string perfect",
        "str",
        "Thought: t\nAction: get\nAction Input: {'a': 1}",
        "get",
        {"a": 1},
        1,
        2 / 2,
    ),
    # str format: args through ast.literal_eval only, so true fails and args become {}
    (
        "string json args",
        "str",
        'Thought: t\nAction: get\nAction Input: {"a": true}',
        "get",
        {"a": True},
        1,
        1 / 2,
    ),
    ("string no input line", "str", "Thought: t\nAction: get", "get", {"a": 1}, 0, 0),
    (
        "string padded action",
        "str",
        "Thought: t\nAction:  get  \nAction Input: {}",
        "get",
        {},
        1,
        1 / 1,
    ),
    (
        "string list args",
        "str",
        "Thought: t\nAction: get\nAction Input: [1]",
        "get",
        {"a": 1},
        1,
        1 / 2,
    ),
    (
        "string two-line thought",
        "str",
        "Thought: a\nb\nAction: get\nAction Input: {'a': 1}",
        "get",
        {"a": 1},
        1,
        2 / 2,
    ),
    (
        "string wrong action",
        "str",
        "Thought: t\nAction: put\nAction Input: {'a': 2}",
        "get",
        {"a": 1},
        1,
        0 / 2,
    ),
]


# -- reason / retrieve / understand (ReasonRetrieveUnderstandEvaluator)

GOLD = {"thought": "find the weather", "name": "get_weather", "args": {"city": "Paris"}}


def p(thought: Any = "find the weather", name: Any = "get_weather", args: Any = None) -> str:
    """A JSON reply; ``args`` None: the gold's."""
    body = {"thought": thought, "name": name, "args": GOLD["args"] if args is None else args}
    return json.dumps(body, ensure_ascii=False)


def gold(**changes: Any) -> dict[str, Any]:
    return {**GOLD, **changes}


R2, R3, R6 = math.sqrt(2), math.sqrt(3), math.sqrt(6)

# (case, prediction, ground truth, thought, name, args v2, args v1, parse_rate)
RRU_JSON_CASES: list[tuple[str, Any, Any, float, float, float, float, float]] = [
    ("perfect", p(), GOLD, 1, 1, 1 / (1 + E), 1, 1),
    # {find, weather} . {find, the, weather} = 2 over sqrt(2) sqrt(3)
    ("thought partial", p("find weather"), GOLD, 2 / R6, 1, 1 / (1 + E), 1, 1),
    ("thought disjoint", p("book a flight"), GOLD, 0, 1, 1 / (1 + E), 1, 1),
    ("thought empty", p(""), GOLD, 0, 1, 1 / (1 + E), 1, 1),
    # {weather: 2} . {find, the, weather} = 2 over 2 sqrt(3)
    ("thought repeated word", p("weather weather"), GOLD, 1 / R3, 1, 1 / (1 + E), 1, 1),
    ("thought a number", p(42), GOLD, 0, 1, 1 / (1 + E), 1, 1),
    ("name differs", p(name="get_forecast"), GOLD, 1, 0, 1 / (1 + E), 1, 1),
    ("name case", p(name="Get_Weather"), GOLD, 1, 0, 1 / (1 + E), 1, 1),
    ("name a list", p(name=["get_weather"]), GOLD, 1, 0, 1 / (1 + E), 1, 1),
    # {city, rome} . {city, paris} = 1 over 2
    ("wrong value", p(args={"city": "Rome"}), GOLD, 1, 1, 0, 1 / 2, 1),
    ("number as text", p(args={"n": "5"}), gold(args={"n": 5}), 1, 1, 1 / (1 + E), 1, 1),
    ("bool as text", p(args={"flag": "True"}), gold(args={"flag": True}), 1, 1, 1 / (1 + E), 1, 1),
    ("bool vs int", p(args={"flag": 1}), gold(args={"flag": True}), 1, 1, 0, 1 / 2, 1),
    # "1" != "1.0"; words {x, 1} . {x, 1, 0} = 2 over sqrt(2) sqrt(3)
    ("int vs float", p(args={"x": 1.0}), gold(args={"x": 1}), 1, 1, 0, 2 / R6, 1),
    ("same float", p(args={"x": 0.50}), gold(args={"x": 0.5}), 1, 1, 1 / (1 + E), 1, 1),
    ("null", p(args={"x": None}), gold(args={"x": None}), 1, 1, 1 / (1 + E), 1, 1),
    # {a,1,b,3} . {a,1,b,2} = 3 over 2 * 2
    (
        "one of two",
        p(args={"a": 1, "b": 3}),
        gold(args={"a": 1, "b": 2}),
        1,
        1,
        1 / (2 + E),
        3 / 4,
        1,
    ),
    (
        "two of three",
        p(args={"a": 1, "b": 2, "c": 9}),
        gold(args={"a": 1, "b": 2, "c": 3}),
        1,
        1,
        2 / (3 + E),
        5 / 6,
        1,
    ),
    ("both empty", p(args={}), gold(args={}), 1, 1, 1, 0, 1),
    ("gold empty only", p(args={"x": 1}), gold(args={}), 1, 1, 0, 0, 1),
    ("pred empty only", p(args={}), GOLD, 1, 1, 0, 0, 1),
    # extra key: {city, paris, z, 9} . {city, paris} = 2 over 2 sqrt(2)
    ("extra key", p(args={"city": "Paris", "z": 9}), GOLD, 1, 1, 1 / (1 + E), 1 / R2, 1),
    (
        "nested equal",
        p(args={"f": {"a": [1, 2]}}),
        gold(args={"f": {"a": [1, 2]}}),
        1,
        1,
        1 / (1 + E),
        1,
        1,
    ),
    # str() of the inner dicts differs in key order; the words are the same
    (
        "nested order",
        p(args={"f": {"b": 2, "a": 1}}),
        gold(args={"f": {"a": 1, "b": 2}}),
        1,
        1,
        0,
        1,
        1,
    ),
    # "a\_b" != "a_b"; words {q, a, _b} . {q, a_b} = 1 over sqrt(3) sqrt(2)
    ("escaped underscore", p(args={"q": "a\\_b"}), gold(args={"q": "a_b"}), 1, 1, 0, 1 / R6, 1),
    ("not readable", "call get_weather", GOLD, 0, 0, 0, 0, 0),
    # first '{' to last '}' of a list reply: a dict without thought and args
    ("list reply", '[{"name": "x"}]', GOLD, 0, 0, 0, 0, 1),
    (
        "no thought key",
        '{"name": "get_weather", "args": {"city": "Paris"}}',
        GOLD,
        0,
        1,
        1 / (1 + E),
        1,
        1,
    ),
    ("args not an object", p(args="city=Paris"), GOLD, 1, 1, 0, 0, 1),
    ("text around", "Sure: " + p() + " done", GOLD, 1, 1, 1 / (1 + E), 1, 1),
    (
        "python literal",
        "{'thought': 'find the weather', 'name': 'get_weather', 'args': {'flag': True}}",
        gold(args={"flag": True}),
        1,
        1,
        1 / (1 + E),
        1,
        1,
    ),
    ("gold unreadable", p(), "nonsense", 0, 0, 0, 0, 0),
    (
        "gold empty, args missing",
        '{"thought": "x", "name": "get_weather"}',
        gold(args={}),
        0,
        1,
        1,
        0,
        1,
    ),
]


STR_GOLD = json.dumps(
    {"thought": "find the weather", "name": "Weather.get", "args": {"city": "Paris"}}
)

# (case, eval type, reply, expected score of that type, parse_rate)
RRU_STR_CASES: list[tuple[str, str, str, float, float]] = [
    ("retrieve exact", "retrieve", "Weather.get", 1, 1),
    ("retrieve in a sentence", "retrieve", "I will call Weather.get now", 1, 1),
    ("retrieve with another api", "retrieve", "Weather.get then Flight.book", 0, 1),
    ("retrieve absent", "retrieve", "call FinishAction", 0, 1),
    ("retrieve case", "retrieve", "weather.get", 0, 1),
    ("retrieve trailing dot", "retrieve", "Weather.get.", 1, 1),
    ("retrieve and finish", "retrieve", "Weather.get, FinishAction", 0, 1),
    ("retrieve empty", "retrieve", "", 0, 1),
    ("understand exact", "understand", "{'city': 'Paris'}", 1, 1),
    ("understand quoted", "understand", "'{'city': 'Paris'}'", 1, 1),
    ("understand json quotes", "understand", '{"city": "Paris"}', 0, 1),
    ("understand spaced", "understand", " {'city': 'Paris'}", 0, 1),
    ("reason same", "reason", "find the weather", 1, 1),
    ("reason partial", "reason", "find weather", 2 / R6, 1),
    ("reason none", "reason", "", 0, 1),
]


# -- plan (PlanningEvaluator, bertscore_match)
# Names are one word each (cosine 1 when equal, else 0); an edge needs 0.75 * name + 0.25 *
# args > 0.8, so the same name and an args cosine above 0.2.


def step(i: Any, name: str, args: Any, prev: list[int] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"id": i, "name": name, "args": args}
    if prev is not None:
        out["prev"] = prev
    return out


def plan(*steps: dict[str, Any]) -> str:
    return json.dumps(list(steps))


A = ("search", {"city": "Paris"})
B = ("book", {"id": 1})
C = ("pay", {"amount": 5})
D = ("notify", {"to": "me"})
FIN = ("FinishAction", {})
BIG = ("search", {"city": "Paris", "country": "France", "zip": "75000", "lang": "fr"})


def steps(*items: tuple[str, Any]) -> str:
    return plan(*(step(i, n, a) for i, (n, a) in enumerate(items)))


# (case, prediction, gold plan, precision, recall, f1, parse_rate)
PLAN_CASES: list[tuple[str, Any, Any, float, float, float, float]] = [
    ("identical", steps(A, B), steps(A, B), 1, 1, 1, 1),
    ("one of two", steps(A), steps(A, B), 1, 1 / 2, 2 / 3, 1),
    ("one extra", steps(A, B, C), steps(A, B), 2 / 3, 1, 4 / 5, 1),
    ("swapped", steps(B, A), steps(A, B), 1 / 2, 1 / 2, 1 / 2, 1),
    # no edge at all: the LIS table starts at 1, one step counts (the free first match)
    ("wholly wrong", steps(C, D), steps(A, B), 1 / 2, 1 / 2, 1 / 2, 1),
    ("empty prediction", "[]", steps(A, B), 0, 0, 0, 0),
    ("empty gold", steps(A), "[]", 0, 0, 0, 0),
    ("no plan", "no plan", steps(A), 0, 0, 0, 0),
    ("item without id", plan({"name": "search", "args": {}}), steps(A), 0, 0, 0, 0),
    ("ids as text", plan(step("0", *A), step("1", *B)), steps(A, B), 1, 1, 1, 1),
    ("listed out of id order", plan(step(1, *B), step(0, *A)), steps(A, B), 1, 1, 1, 1),
    ("finish dropped from prediction", steps(A, B, FIN), steps(A, B), 1, 1, 1, 1),
    ("finish dropped from gold", steps(A, B), steps(A, B, FIN), 1, 1, 1, 1),
    ("finish first is kept", steps(FIN, A), steps(A), 1 / 2, 1, 2 / 3, 1),
    # {city, rome} . {city, paris} = 1/2: 0.75 + 0.125 > 0.8
    ("other value, same key", steps(("search", {"city": "Rome"})), steps(A), 1, 1, 1, 1),
    # args cosine 0: 0.75, no edge, and still one free step
    ("no shared argument word", steps(("search", {"town": "Rome"})), steps(A), 1, 1, 1, 1),
    # {city, rome} . BIG's 8 words = 1 / (sqrt 2 sqrt 8) = 0.25 > 0.2: an edge
    ("weak overlap matched", steps(("search", {"city": "Rome"}), B), steps(BIG, B), 1, 1, 1, 1),
    # {city, rome, x, y} . BIG = 1 / (2 sqrt 8) = 0.177: no edge, B alone is matched
    (
        "weaker overlap unmatched",
        steps(("search", {"city": "Rome", "x": "y"}), B),
        steps(BIG, B),
        1 / 2,
        1 / 2,
        1 / 2,
        1,
    ),
    ("repeated step", steps(A, A), steps(A), 1 / 2, 1, 2 / 3, 1),
    ("gold repeats", steps(A), steps(A, A), 1, 1 / 2, 2 / 3, 1),
    # the exact A outweighs the near A (0.875) for gold A
    (
        "retry with other value",
        steps(A, B, ("search", {"city": "Rome"})),
        steps(A, B),
        2 / 3,
        1,
        4 / 5,
        1,
    ),
    ("reversed three", steps(C, B, A), steps(A, B, C), 1 / 3, 1 / 3, 1 / 3, 1),
    ("one out of place", steps(A, C, B), steps(A, B, C), 2 / 3, 2 / 3, 2 / 3, 1),
    ("detour", steps(A, D, B), steps(A, B), 2 / 3, 1, 4 / 5, 1),
    ("fenced", "```json\n" + steps(A, B) + "\n```", steps(A, B), 1, 1, 1, 1),
    ("text around", "Plan: " + steps(A, B) + " done", steps(A, B), 1, 1, 1, 1),
    ("args as text", plan(step(0, "search", "city=Paris")), steps(A), 1, 1, 1, 1),
    (
        "longer name unmatched",
        steps(("search_flights", A[1]), B),
        steps(A, B),
        1 / 2,
        1 / 2,
        1 / 2,
        1,
    ),
    # names {search, now} . {search, now, please} = 2 / sqrt 6: 0.75 * 0.816 + 0.25 > 0.8
    (
        "names of several words",
        steps(("search now", A[1]), B),
        steps(("search now please", A[1]), B),
        1,
        1,
        1,
        1,
    ),
    ("empty arguments", steps(("search", {}), ("book", {})), steps(A, B), 1 / 2, 1 / 2, 1 / 2, 1),
    ("an object, no list", '{"name": "search"}', steps(A), 0, 0, 0, 0),
    ("four of four", steps(A, B, C, D), steps(A, B, C, D), 1, 1, 1, 1),
    ("two of four", steps(A, B, C, D), steps(B, D), 1 / 2, 1, 2 / 3, 1),
]

# (case, prediction, gold plan): T-Eval raises (nothing left once FinishAction is dropped)
PLAN_NO_VALUE: list[tuple[str, Any, Any]] = [
    ("only finish predicted", steps(FIN), steps(A)),
    ("only finish in gold", steps(A), steps(FIN)),
]

# permutation_match: only lengths and dependencies (prev) count, names never.
# (case, prediction steps, gold steps, precision, recall, f1)
PERMUTATION_CASES: list[
    tuple[str, list[dict[str, Any]], list[dict[str, Any]], float, float, float]
] = [
    ("one and one", [step(0, *A, [])], [step(0, *A, [])], 1, 1, 1),
    # finish appended: 3 predicted, 2 gold, every self-link kept where it maps: 2 of 2, 2 of 3
    ("two for one", [step(0, *A, []), step(1, *B, [])], [step(0, *A, [])], 2 / 3, 1, 4 / 5),
    (
        "same chain",
        [step(0, *A, []), step(1, *B, [0])],
        [step(0, *A, []), step(1, *B, [0])],
        1,
        1,
        1,
    ),
    # gold has the link 0 -> 1, the prediction none: 3 of 4 gold links
    (
        "link missed",
        [step(0, *A, []), step(1, *B, [])],
        [step(0, *A, []), step(1, *B, [0])],
        1,
        3 / 4,
        6 / 7,
    ),
    (
        "link invented",
        [step(0, *A, []), step(1, *B, [0])],
        [step(0, *A, []), step(1, *B, [])],
        3 / 4,
        1,
        6 / 7,
    ),
    (
        "ids out of order",
        [step(1, *B, [0]), step(0, *A, [])],
        [step(0, *A, []), step(1, *B, [0])],
        1,
        1,
        1,
    ),
    (
        "three for two",
        [step(0, *A, []), step(1, *B, []), step(2, *C, [])],
        [step(0, *A, []), step(1, *B, [])],
        3 / 4,
        1,
        6 / 7,
    ),
    ("finish given", [step(0, *A, []), step(1, *FIN, [])], [step(0, *A, [])], 1, 1, 1),
    # pred chain 0 -> 1 -> 2, gold 0 -> 1 and 0 -> 2: one of the two links can be kept
    (
        "chain against fork",
        [step(0, *A, []), step(1, *B, [0]), step(2, *C, [1])],
        [step(0, *A, []), step(1, *B, [0]), step(2, *C, [0])],
        5 / 6,
        5 / 6,
        5 / 6,
    ),
    ("names ignored", [step(0, *C, [])], [step(0, *A, [])], 1, 1, 1),
    # a gold of 9 steps (10 with finish) is replaced by the prediction's first 9, whose records
    # both sides then share: every self-link is appended twice, recall 4 / 2
    ("gold past nine", [step(0, *A, [])], [step(i, *B, []) for i in range(9)], 1, 2, 4 / 3),
]

# (case, reply, format, gold answer, review_quality, parse_rate)
REVIEW_CASES: list[tuple[str, str, str, Any, float, float]] = [
    ("bare letter", "A", "str", "A", 1, 1),
    ("after a colon", "Answer: B", "str", "B", 1, 1),
    ("lower case", "Answer: b", "str", "B", 0, 0),
    ("letter and words", "Answer: E. unable", "str", "E", 1, 1),
    ("no colon", "The answer is C", "str", "C", 0, 0),
    ("no space", "Answer:D", "str", "D", 1, 1),
    # the first letter of the first word
    ("a word first", "Answer: Because A", "str", "A", 0, 1),
    ("nothing after", "Answer: ", "str", "A", 0, 0),
    ("empty", "", "str", "A", 0, 0),
    ("two colons", "Answer: A: no, B", "str", "A", 1, 1),
    ("thought first", "Thought: hmm\nAnswer: C", "str", "C", 0, 0),
    ("padded", "  A  ", "str", "A", 1, 1),
    ("wrong letter", "Answer: A", "str", "B", 0, 1),
    ("past E", "Answer: F", "str", "F", 0, 0),
    ("a word that starts with E", "Answer: Error", "str", "E", 1, 1),
    ("newline", "Answer:\nD", "str", "D", 1, 1),
    ("full-width colon", "答案：A", "str", "A", 0, 0),
    ("bold", "Answer: **A**", "str", "A", 0, 0),
    ("parenthesis", "Answer: (A)", "str", "A", 0, 0),
    ("several letters", "Answer: A B C", "str", "A", 1, 1),
    ("json true", '{"is_finished": true}', "json", {"review": True}, 1, 1),
    ("json false", '{"is_finished": false}', "json", {"review": True}, 0, 1),
    # 1 in [True, False]; {"review": 1} == {"review": True}
    ("json one", '{"is_finished": 1}', "json", {"review": True}, 1, 1),
    ("json text", '{"is_finished": "true"}', "json", {"review": True}, 0, 0),
    ("json other key", '{"finished": true}', "json", {"review": True}, 0, 0),
    ("json unreadable", "not json", "json", {"review": True}, 0, 0),
    ("python literal", "{'is_finished': True}", "json", {"review": True}, 1, 1),
    # the reply reads as {"review": True}, never equal to a bare boolean
    ("gold a bare boolean", '{"is_finished": true}', "json", True, 0, 1),
    ("json zero float", '{"is_finished": 0.0}', "json", {"review": False}, 1, 1),
    ("json fenced", '```json\n{"is_finished": true}\n```', "json", {"review": True}, 1, 1),
    ("json list", "[true]", "json", {"review": True}, 0, 0),
    ("json null", '{"is_finished": null}', "json", {"review": True}, 0, 0),
]
