"""The k=3 workload: a generated suite whose every task takes three tool calls, then an answer.

``write_k3_suite(root, tasks)`` writes a suite of ``tasks`` tasks (one task file, as a suite
imported from elsewhere is) over one tool, ``ledger.lookup(item, part)``: task ``i`` asks for the
three parts of item ``i``, its reference path looks each up (recorded), and its answer names the
three values. The ``reference`` model follows that path offline (four model calls an episode:
three calls and ``Finish``); ``bench.fake_model`` answers the same four calls over HTTP, so both
runs make the same tool calls and store episodes of the same shape.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

PARTS = 3
TOOL = "ledger"
API = "lookup"
FUNCTION = f"{API}_for_{TOOL}"
"""The name the agents offer the API under (``<api>_for_<tool>``)."""

_TOOL_DOC = {
    "name": TOOL,
    "category": "Data",
    "description": "A ledger of items, each in three parts.",
    "apis": [
        {
            "name": API,
            "description": "The value of one part of an item.",
            "parameters": {
                "type": "object",
                "properties": {
                    "item": {"type": "string", "description": "The item's id, e.g. item-0042."},
                    "part": {"type": "integer", "description": "The part, 1 to 3."},
                },
                "required": ["item", "part"],
            },
            "returns": "{item, part, value}.",
        }
    ],
}


def item_id(i: int) -> str:
    return f"item-{i:05d}"


def part_value(i: int, part: int) -> int:
    """The recorded value of ``part`` of item ``i``."""
    return (i * 7919 + part * 104729) % 100_000


def answer_text(item: str, values: list[object]) -> str:
    return f"The three parts of {item} are " + ", ".join(str(v) for v in values) + "."


def _task(i: int) -> dict[str, object]:
    item = item_id(i)
    values = [part_value(i, p) for p in range(1, PARTS + 1)]
    return {
        "id": f"k3_{i:05d}",
        "group": "G1",
        "query": f"Look up the three parts of {item} in the ledger and tell me their values.",
        "tools": [{"tool": TOOL, "api": API}],
        "reference": {
            "steps": [
                {"thought": f"Part {p} of {item}.", "tool": TOOL, "api": API,
                 "args": {"item": item, "part": p}}
                for p in range(1, PARTS + 1)
            ],
            "answer": answer_text(item, values),
        },
        "checks": [{"kind": "contains", "value": str(v)} for v in values],
    }  # fmt: skip


def _recording(i: int, part: int) -> str:
    item = item_id(i)
    return json.dumps(
        {
            "tool": TOOL,
            "api": API,
            "args": {"item": item, "part": part},
            "response": {
                "ok": True,
                "body": {"item": item, "part": part, "value": part_value(i, part)},
                "error": "",
            },
            "provenance": {"source": "hand", "note": "generated k=3 bench suite"},
        }
    )


def write_k3_suite(root: Path, tasks: int) -> Path:
    """A k=3 suite of ``tasks`` tasks at ``root`` (created); returns ``root``."""
    for sub in ("tools", "tasks", "recordings"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    (root / "suite.yaml").write_text(
        yaml.safe_dump({"name": f"k3-{tasks}", "version": "1", "description": "k=3 bench suite"})
    )
    (root / "tools" / f"{TOOL}.yaml").write_text(yaml.safe_dump(_TOOL_DOC, sort_keys=False))
    docs = [_task(i) for i in range(tasks)]
    (root / "tasks" / "tasks.yaml").write_text(yaml.safe_dump(docs, sort_keys=False))
    lines = (_recording(i, p) + "\n" for i in range(tasks) for p in range(1, PARTS + 1))
    (root / "recordings" / f"{TOOL}.jsonl").write_text("".join(lines))
    return root
