"""A tiny suite for the harness tests (runner, CLI, compare, crash safety).

``suite_path(tmp_path)`` returns the shared fixture ``tests/fixtures/suites/mini`` when it exists,
otherwise writes an equivalent small suite into ``tmp_path`` (three tools, six tasks in three
groups, one unsolvable, one recorded error on a reference path).
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "suites" / "mini"

TOOLS = [
    {
        "name": "Weatherly",
        "category": "Weather",
        "description": "Weather reports.",
        "apis": [
            {
                "name": "current",
                "description": "Current weather of a city.",
                "parameters": {
                    "type": "object",
                    "properties": {"city": {"type": "string"}},
                    "required": ["city"],
                },
            }
        ],
    },
    {
        "name": "SkyFlights",
        "category": "Travel",
        "description": "Flight search and booking.",
        "apis": [
            {
                "name": "search",
                "description": "Search flights between two airports.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "origin": {"type": "string"},
                        "destination": {"type": "string"},
                    },
                    "required": ["origin", "destination"],
                },
            },
            {
                "name": "book",
                "description": "Book a flight by id.",
                "parameters": {
                    "type": "object",
                    "properties": {"flight_id": {"type": "string"}},
                    "required": ["flight_id"],
                },
            },
        ],
    },
    {
        "name": "FxRates",
        "category": "Finance",
        "description": "Currency exchange rates.",
        "apis": [
            {
                "name": "rate",
                "description": "Exchange rate between two currencies.",
                "parameters": {
                    "type": "object",
                    "properties": {
                        "base": {"type": "string"},
                        "quote": {"type": "string"},
                        "amount": {"type": "number", "default": 1},
                    },
                    "required": ["base", "quote"],
                },
            }
        ],
    },
]


def _rec(
    tool: str,
    api: str,
    args: dict,
    body: object,
    *,
    ok: bool = True,
    error: str = "",
    occurrence: int | None = None,
) -> dict:
    rec = {
        "tool": tool,
        "api": api,
        "args": args,
        "response": {"ok": ok, "body": body, "error": error},
    }
    if occurrence is not None:
        rec["occurrence"] = occurrence
    return rec


RECORDINGS = [
    _rec("Weatherly", "current", {"city": "Oslo"}, {"city": "Oslo", "temp_c": 4, "sky": "snow"}),
    _rec("Weatherly", "current", {"city": "Lima"}, {"city": "Lima", "temp_c": 19, "sky": "fog"}),
    _rec(
        "SkyFlights",
        "search",
        {"origin": "OSL", "destination": "LIM"},
        {"flights": [{"id": "SF-204", "price_eur": 812}]},
    ),
    _rec(
        "SkyFlights",
        "book",
        {"flight_id": "SF-204"},
        None,
        ok=False,
        error="internal error, try again",
        occurrence=1,
    ),
    _rec(
        "SkyFlights",
        "book",
        {"flight_id": "SF-204"},
        {"booking": "BK-77", "status": "confirmed"},
        occurrence=2,
    ),
    _rec("FxRates", "rate", {"base": "EUR", "quote": "NOK"}, {"rate": 11.5}),
    _rec(
        "FxRates",
        "rate",
        {"base": "EUR", "quote": "NOK", "amount": 812},
        {"rate": 11.5, "converted": 9338.0},
    ),
]


def _task(
    tid: str,
    query: str,
    tools: list[tuple[str, str]],
    steps: list[tuple],
    answer: str,
    checks: list[dict],
    group: str = "G1",
    solvable: bool = True,
) -> dict:
    return {
        "id": tid,
        "query": query,
        "group": group,
        "solvable": solvable,
        "tools": [{"tool": t, "api": a} for t, a in tools],
        "reference": {
            "steps": [
                {"thought": th, "tool": t, "api": a, "args": args} for th, t, a, args in steps
            ],
            "answer": answer,
        },
        "checks": checks,
    }


ALL_APIS = [
    ("Weatherly", "current"),
    ("SkyFlights", "search"),
    ("SkyFlights", "book"),
    ("FxRates", "rate"),
]

TASKS = [
    _task(
        "weather-oslo",
        "What is the weather in Oslo right now?",
        [("Weatherly", "current")],
        [("Look up Oslo.", "Weatherly", "current", {"city": "Oslo"})],
        "It is 4 C with snow in Oslo.",
        [{"kind": "contains", "value": "snow"}],
    ),
    _task(
        "weather-lima",
        "How warm is it in Lima?",
        [("Weatherly", "current")],
        [("Look up Lima.", "Weatherly", "current", {"city": "Lima"})],
        "It is 19 C in Lima.",
        [{"kind": "number", "value": 19, "tolerance": 0.5}],
    ),
    _task(
        "fx-eur-nok",
        "How many NOK is one euro?",
        [("FxRates", "rate")],
        [("Get the rate.", "FxRates", "rate", {"base": "EUR", "quote": "NOK"})],
        "One euro is 11.5 NOK.",
        [{"kind": "number", "value": 11.5, "tolerance": 0.01}],
    ),
    _task(
        "book-osl-lim",
        "Book me the cheapest flight from OSL to LIM and give the booking code.",
        [("SkyFlights", "search"), ("SkyFlights", "book")],
        [
            ("Search flights.", "SkyFlights", "search", {"origin": "OSL", "destination": "LIM"}),
            ("Book it.", "SkyFlights", "book", {"flight_id": "SF-204"}),
            ("Retry the booking.", "SkyFlights", "book", {"flight_id": "SF-204"}),
        ],
        "Booked SF-204, booking code BK-77.",
        [{"kind": "contains", "value": "BK-77"}],
        group="G2",
    ),
    _task(
        "trip-cost-nok",
        "What does the OSL to LIM flight cost in NOK?",
        [("SkyFlights", "search"), ("FxRates", "rate"), ("Weatherly", "current")],
        [
            ("Search flights.", "SkyFlights", "search", {"origin": "OSL", "destination": "LIM"}),
            (
                "Convert the price.",
                "FxRates",
                "rate",
                {"base": "EUR", "quote": "NOK", "amount": 812},
            ),
        ],
        "The flight costs 9338 NOK.",
        [{"kind": "number", "value": 9338, "tolerance": 1}],
        group="G3",
    ),
    _task(
        "stock-price",
        "What is the ACME stock price today?",
        [("Weatherly", "current")],
        [],
        "I cannot do this: no tool offered gives stock prices.",
        [],
        solvable=False,
    ),
]


def write_suite(root: Path) -> Path:
    """Write the tiny suite into ``root`` and return it."""
    (root / "tools").mkdir(parents=True, exist_ok=True)
    (root / "tasks").mkdir(exist_ok=True)
    (root / "recordings").mkdir(exist_ok=True)
    (root / "suite.yaml").write_text(yaml.safe_dump({"name": "harness-mini", "version": "1"}))
    (root / "tools" / "tools.yaml").write_text(yaml.safe_dump(TOOLS, sort_keys=False))
    (root / "tasks" / "tasks.yaml").write_text(yaml.safe_dump(TASKS, sort_keys=False))
    (root / "recordings" / "main.jsonl").write_text(
        "".join(json.dumps(r) + "\n" for r in RECORDINGS)
    )
    return root


def suite_path(tmp_path: Path) -> Path:
    """The shared mini fixture suite when present, else this module's suite in ``tmp_path``."""
    if (FIXTURE / "suite.yaml").is_file():
        return FIXTURE
    return write_suite(tmp_path / "suite")


def comparable_scores(run: str | Path) -> str:
    """A run's ``scores.json`` without what differs between any two runs of the same episodes:
    the measured wall times and the run id."""

    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("wall_seconds", "run_id")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(json.loads(Path(run, "scores.json").read_text())))
