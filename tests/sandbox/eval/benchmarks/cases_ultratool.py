"""UltraTool's cases: inputs of ``evaluation/utils.py`` with the values worked by hand.

Pure data (standard library only), read by the tests beside it and by a cross-check that runs
UltraTool's own functions on the same inputs outside the project. Argument scores are
``1 - Levenshtein(str(gold), str(pred)) / max(len)`` per key, as UltraTool computes them.
"""

from __future__ import annotations

from typing import Any


def g(label: str = "1.1 Find the weather", tool: str = "search", **param: Any) -> dict[str, Any]:
    """A reference step."""
    return {"step": label, "tool": tool, "param": param}


def r(
    label: Any = "1.1 Find the weather", tool: Any = "search", param: Any = None
) -> dict[str, Any]:
    """A predicted record."""
    return {"step": label, "tool": tool, "param": {} if param is None else param}


CITY = g(city="Paris")

# (case, prediction, reference, per-step scores)
PARAM_CASES: list[tuple[str, Any, list[dict[str, Any]], list[float]]] = [
    ("exact", [r(param={"city": "Paris"})], [CITY], [1.0]),
    ("one letter short", [r(param={"city": "Pari"})], [CITY], [1 - 1 / 5]),
    ("nothing alike", [r(param={"city": "Rome"})], [CITY], [1 - 5 / 5]),
    ("key missing", [r(param={"town": "Paris"})], [CITY], [0.0]),
    (
        "one key of two",
        [r(param={"city": "Paris", "days": "4"})],
        [g(city="Paris", days="3")],
        [(1 + 0) / 2],
    ),
    ("empty gold, empty pred", [r(param={"note": ""})], [g(note="")], [1.0]),
    ("empty gold, text pred", [r(param={"note": "x"})], [g(note="")], [0.0]),
    ("empty list gold, empty text", [r(param={"tags": ""})], [g(tags=[])], [1.0]),
    ("list equal", [r(param={"tags": ["a", "b"]})], [g(tags=["a", "b"])], [1.0]),
    # "['a', 'b']" vs "['a', 'c']": one edit in ten characters
    ("list one item", [r(param={"tags": ["a", "c"]})], [g(tags=["a", "b"])], [1 - 1 / 10]),
    ("boolean as str()", [r(param={"flag": True})], [g(flag="True")], [1.0]),
    # "5" vs "5.0": two insertions over three characters
    ("float as str()", [r(param={"n": 5.0})], [g(n="5")], [1 - 2 / 3]),
    ("escaped underscore value", [r(param={"path": "a\\_b"})], [g(path="a_b")], [1.0]),
    ("escaped underscore key", [r(param={"file\\_path": "x"})], [g(file_path="x")], [1.0]),
    ("tool ignored", [r(tool="other", param={"city": "Paris"})], [CITY], [1.0]),
    ("other label", [r(label="1.2 Book", param={"city": "Paris"})], [CITY], [0.0]),
    ("label's first word", [r(label="1.1", param={"city": "Paris"})], [CITY], [1.0]),
    ("param not an object", [r(param="city=Paris")], [CITY], [0.0]),
    ("gold without keys", [r(param={})], [g()], [0.0]),
    ("first record wins", [r(param={"city": "Rome"}), r(param={"city": "Paris"})], [CITY], [0.0]),
    (
        "record without param skipped",
        [{"step": "1.1", "tool": "x"}, r(param={"city": "Paris"})],
        [CITY],
        [1.0],
    ),
    ("ellipsis skipped", [..., r(param={"city": "Paris"})], [CITY], [1.0]),
    ("nested list", [[r(param={"city": "Paris"})]], [CITY], [1.0]),
    ("empty prediction", [], [CITY, g(label="1.2 Book", tool="book", id="7")], [0.0, 0.0]),
    ("no reference steps", [r(param={"city": "Paris"})], [], [0.0]),
    # "{'a': 1}" vs "{'a': 2}": one edit in eight characters
    ("nested object", [r(param={"filter": {"a": 2}})], [g(filter={"a": 1})], [1 - 1 / 8]),
    ("case differs", [r(param={"city": "paris"})], [CITY], [1 - 1 / 5]),
    ("leading space kept", [r(param={"city": " Paris"})], [CITY], [1 - 1 / 6]),
    ("extra key ignored", [r(param={"city": "Paris", "zoom": "2"})], [CITY], [1.0]),
    (
        "second step only",
        [r(label="1.2 Book", tool="book", param={"id": "7"})],
        [CITY, g(label="1.2 Book", tool="book", id="7")],
        [0.0, 1.0],
    ),
    ("null prediction as str()", [r(param={"x": None})], [g(x="None")], [1.0]),
    ("label not text", [r(label=1.1, param={"city": "Paris"})], [CITY], [0.0]),
    ("empty record skipped", [{}, r(param={"city": "Paris"})], [CITY], [1.0]),
    # the first key that unescapes to the gold key is the one compared
    ("two keys unescape alike", [r(param={"a\\_b": "x", "a_b": "y"})], [g(a_b="y")], [0.0]),
]

# values UltraTool's code cannot take (len() of a number, a boolean or None raises there);
# here they count as not empty (docs/evaluation.md)
PARAM_COMPLETIONS: list[tuple[str, Any, list[dict[str, Any]], list[float]]] = [
    ("number gold", [r(param={"days": 3})], [g(days=3)], [1.0]),
    ("number gold, text pred", [r(param={"days": "30"})], [g(days=3)], [1 - 1 / 2]),
    # "True" -> "False": three substitutions and one insertion over five characters
    ("boolean gold", [r(param={"flag": False})], [g(flag=True)], [1 - 4 / 5]),
    ("empty gold, number pred", [r(param={"note": 0})], [g(note="")], [0.0]),
]

# (case, samples) with the flat mean over all steps of all samples, and the per-sample mean
# UltraTool computes and does not use
FLAT_CASES: list[tuple[str, list[tuple[Any, list[dict[str, Any]]]], float]] = [
    (
        "steps weigh alike",
        [
            (
                [r(param={"city": "Pari"}), r(label="1.2", tool="book", param={"id": "7"})],
                [CITY, g(label="1.2", tool="book", id="7")],
            ),
            ([], [CITY]),
        ],
        (0.8 + 1.0 + 0.0) / 3,
    ),
    (
        "a sample without steps counts one zero",
        [([r(param={"city": "Paris"})], [CITY]), ([], [])],
        (1.0 + 0.0) / 2,
    ),
]

SEL = [{"step": "1.1 Find", "tool": "search"}, {"step": "1.2 Book", "tool": "book_hotel"}]

# (case, prediction, reference, tools as UltraTool pairs them)
SELECT_CASES: list[tuple[str, Any, list[dict[str, Any]], list[Any]]] = [
    (
        "exact",
        [{"step": "1.1", "tool": "search"}, {"step": "1.2", "tool": "book_hotel"}],
        SEL,
        ["search", "book_hotel"],
    ),
    (
        "one wrong",
        [{"step": "1.1", "tool": "search"}, {"step": "1.2", "tool": "book"}],
        SEL,
        ["search", "book"],
    ),
    ("one missing", [{"step": "1.1", "tool": "search"}], SEL, ["search", "no_good"]),
    (
        "escaped underscore",
        [{"step": "1.2", "tool": "book\\_hotel"}],
        SEL,
        ["no_good", "book_hotel"],
    ),
    (
        "order does not matter",
        [{"step": "1.2", "tool": "book_hotel"}, {"step": "1.1", "tool": "search"}],
        SEL,
        ["search", "book_hotel"],
    ),
    (
        "first record wins",
        [{"step": "1.1", "tool": "x"}, {"step": "1.1", "tool": "search"}],
        SEL,
        ["x", "no_good"],
    ),
    (
        "label's first word",
        [{"step": "1.1 anything", "tool": "search"}],
        SEL,
        ["search", "no_good"],
    ),
    ("other label", [{"step": "1.3", "tool": "search"}], SEL, ["no_good", "no_good"]),
    (
        "no tool key skipped",
        [{"step": "1.1"}, {"step": "1.1", "tool": "search"}],
        SEL,
        ["search", "no_good"],
    ),
    ("tool a list", [{"step": "1.1", "tool": ["search"]}], SEL, [["search"], "no_good"]),
    # str() of the list shows the backslash, .replace fails on a list: the record is skipped
    ("escaped tool in a list", [{"step": "1.1", "tool": ["s\\_x"]}], SEL, ["no_good", "no_good"]),
    ("a tuple", ([{"step": "1.1", "tool": "search"}], "rest"), SEL, ["search", "no_good"]),
    ("nested list", [[{"step": "1.1", "tool": "search"}]], SEL, ["search", "no_good"]),
    ("a dict reply", {"step": "1.1", "tool": "search"}, SEL, ["no_good", "no_good"]),
    ("label a number", [{"step": 1.1, "tool": "search"}], SEL, ["no_good", "no_good"]),
    ("case differs", [{"step": "1.1", "tool": "Search"}], SEL, ["Search", "no_good"]),
    ("empty", [], SEL, ["no_good", "no_good"]),
    ("no reference steps", [{"step": "1.1", "tool": "search"}], [], []),
    ("ellipsis skipped", [..., {"step": "1.1", "tool": "search"}], SEL, ["search", "no_good"]),
    ("tool empty text", [{"step": "1.1", "tool": ""}], SEL, ["", "no_good"]),
    ("tool None", [{"step": "1.1", "tool": None}], SEL, [None, "no_good"]),
    (
        "two records one label",
        [{"step": "1.1", "tool": "search"}, {"step": "1.1 again", "tool": "book_hotel"}],
        SEL,
        ["search", "no_good"],
    ),
    (
        "gold label not text",
        [{"step": "1.1", "tool": "search"}],
        [{"step": 1, "tool": "search"}],
        ["no_good"],
    ),
    ("spaces in tool kept", [{"step": "1.1", "tool": " search"}], SEL, [" search", "no_good"]),
    (
        "records of other shape",
        ["1.1 search", {"step": "1.2", "tool": "book_hotel"}],
        SEL,
        ["no_good", "book_hotel"],
    ),
    ("label with a dot only", [{"step": "1.1.", "tool": "search"}], SEL, ["no_good", "no_good"]),
    ("label after a space", [{"step": " 1.1", "tool": "search"}], SEL, ["no_good", "no_good"]),
    ("tab in label", [{"step": "1.1\tFind", "tool": "search"}], SEL, ["no_good", "no_good"]),
    (
        "many records",
        [{"step": f"1.{i}", "tool": "x"} for i in range(9)] + [{"step": "1.1", "tool": "search"}],
        SEL,
        ["x", "x"],
    ),
    (
        "double escape",
        [{"step": "1.2", "tool": "book\\\\_hotel"}],
        SEL,
        ["no_good", "book\\_hotel"],
    ),
]

AWARE = [{"step": "1.1 Get the path", "tool": "0"}, {"step": "1.2 Write", "tool": "1"}]

# (case, prediction, reference, flags as UltraTool pairs them)
AWARE_CASES: list[tuple[str, Any, list[dict[str, Any]], list[int]]] = [
    ("exact", [{"step": "1.1", "tool": "0"}, {"step": "1.2", "tool": "1"}], AWARE, [0, 1]),
    ("flags as numbers", [{"step": "1.1", "tool": 0}, {"step": "1.2", "tool": 1}], AWARE, [0, 1]),
    ("one wrong", [{"step": "1.1", "tool": "1"}, {"step": "1.2", "tool": "1"}], AWARE, [1, 1]),
    # a step not found takes the wrong flag: 1 for a gold 0, 0 for a gold 1
    ("none found", [], AWARE, [1, 0]),
    ("unreadable flag", [{"step": "1.1", "tool": "yes"}], AWARE, [1, 0]),
    ("flag None", [{"step": "1.2", "tool": None}], AWARE, [1, 0]),
    ("flag a bool", [{"step": "1.2", "tool": True}], AWARE, [1, 1]),
    ("label's first word", [{"step": "1.2 anything", "tool": "1"}], AWARE, [1, 1]),
    (
        "first record wins",
        [{"step": "1.2", "tool": "0"}, {"step": "1.2", "tool": "1"}],
        AWARE,
        [1, 0],
    ),
    (
        "bad record then good",
        [{"step": "1.2", "tool": "x"}, {"step": "1.2", "tool": "1"}],
        AWARE,
        [1, 1],
    ),
    ("not a list", ({"step": "1.1", "tool": "0"},), AWARE, [1, 0]),
    ("a dict", {"step": "1.1", "tool": "0"}, AWARE, [1, 0]),
    ("float text", [{"step": "1.1", "tool": "0.0"}], AWARE, [1, 0]),
    ("float number", [{"step": "1.1", "tool": 0.0}], AWARE, [0, 0]),
    ("flag 2", [{"step": "1.2", "tool": "2"}], AWARE, [1, 2]),
    ("label a number", [{"step": 1.1, "tool": "0"}], AWARE, [1, 0]),
    ("no reference steps", [{"step": "1.1", "tool": "0"}], [], []),
    ("padded flag", [{"step": "1.1", "tool": " 0 "}], AWARE, [0, 0]),
    ("other label", [{"step": "2.1", "tool": "0"}], AWARE, [1, 0]),
    ("strings skipped", ["1.1 0", {"step": "1.2", "tool": "1"}], AWARE, [1, 1]),
    ("missing tool key", [{"step": "1.1"}], AWARE, [1, 0]),
    ("negative flag", [{"step": "1.1", "tool": "-1"}], AWARE, [-1, 0]),
    ("empty flag", [{"step": "1.1", "tool": ""}], AWARE, [1, 0]),
    ("nested list not unwrapped", [[{"step": "1.1", "tool": "0"}]], AWARE, [1, 0]),
    (
        "both right, reversed",
        [{"step": "1.2", "tool": "1"}, {"step": "1.1", "tool": "0"}],
        AWARE,
        [0, 1],
    ),
    ("ellipsis", [..., {"step": "1.1", "tool": "0"}], AWARE, [0, 0]),
    ("gold flags as numbers", [{"step": "1.1", "tool": "0"}], [{"step": "1.1", "tool": 0}], [0]),
    ("only the second", [{"step": "1.2", "tool": "1"}], AWARE, [1, 1]),
    ("label with trailing dot", [{"step": "1.1.", "tool": "0"}], AWARE, [1, 0]),
    (
        "full record",
        [{"step": "1.1 Get the path", "tool": "0"}, {"step": "1.2 Write", "tool": "1"}],
        AWARE,
        [0, 1],
    ),
]

# UltraTool's collectors on a whole file: (case, kind, records, predictions, bad replies)
COLLECT_CASES: list[tuple[str, str, list[dict[str, Any]], list[Any], int]] = [
    (
        "gpt json reply",
        "aware",
        [{"data": {"reference": []}, "init output": '[{"step": "1.1", "tool": "1"}]'}],
        [[{"step": "1.1", "tool": "1"}]],
        0,
    ),
    (
        "fenced with true",
        "param",
        [
            {
                "data": {"reference": []},
                "init output": '```json\n[{"step": "1.1", "tool": "a", "param": {"x": true}}]\n```',
            }
        ],
        [[{"step": "1.1", "tool": "a", "param": {"x": True}}]],
        0,
    ),
    (
        "null becomes text",
        "param",
        [
            {
                "data": {"reference": []},
                "init output": '[{"step": "1.1", "tool": "a", "param": {"x": null}}]',
            }
        ],
        [[{"step": "1.1", "tool": "a", "param": {"x": "null"}}]],
        0,
    ),
    (
        "text before the list",
        "aware",
        [{"data": {"reference": []}, "init output": 'Output: [{"step": "1.1", "tool": "0"}]'}],
        [[{"step": "1.1", "tool": "0"}]],
        0,
    ),
    (
        "cut before the last step",
        "aware",
        [
            {
                "data": {"reference": []},
                "init output": '[{"step": "1.1", "tool": "0"}, {"step": "1.2", "to',
            }
        ],
        [[{"step": "1.1", "tool": "0"}]],
        0,
    ),
    (
        "missing brace",
        "param",
        [
            {
                "data": {"reference": []},
                "init output": '[{"step": "1.1", "tool": "a", "param": {"x": "1"}]',
            }
        ],
        [[{"step": "1.1", "tool": "a", "param": {"x": "1"}}]],
        0,
    ),
    (
        "unreadable",
        "aware",
        [{"data": {"reference": []}, "init output": "I cannot do this"}],
        [[]],
        1,
    ),
    (
        "other model layout, last list",
        "aware",
        [
            {
                "question": {"reference": []},
                "total output": {
                    "init output": [
                        '[{"step": "1", "tool": "0"}] then [{"step": "1", "tool": "1"}]'
                    ]
                },
            }
        ],
        [[{"step": "1", "tool": "1"}]],
        0,
    ),
    (
        "escaped underscore and full-width comma",
        "aware",
        [{"data": {"reference": []}, "init output": '[{"step": "1.1"， "tool": "a\\_b"}]'}],
        [[{"step": "1.1", "tool": "a_b"}]],
        0,
    ),
    (
        "a parsed list follows the previous outcome",
        "aware",
        [
            {"data": {"reference": []}, "init output": "nothing"},
            {"data": {"reference": []}, "init output": [{"step": "1.1", "tool": "0"}]},
        ],
        [[], []],
        2,
    ),
    (
        "a parsed list after a success",
        "aware",
        [
            {"data": {"reference": []}, "init output": "[]"},
            {"data": {"reference": []}, "init output": [{"step": "1.1", "tool": "0"}]},
        ],
        [[], [{"step": "1.1", "tool": "0"}]],
        0,
    ),
    (
        "single quotes",
        "aware",
        [{"data": {"reference": []}, "init output": "[{'step': '1.1', 'tool': '0'}]"}],
        [[{"step": "1.1", "tool": "0"}]],
        0,
    ),
]
