"""ToolEyes' inference output scored by its rule-based arithmetic: ``sandbox rescore --tooleyes``.

ToolEyes' inference writes one record per query, ``{"id", "conversations", "path",
"scenario"}`` (its evaluation reads them as one JSON list; its inference appends JSON lines:
both are read). ``read_tooleyes`` scores every conversation (``tooleyes``: format alignment, tool
reality, Ans_pass and the neat error shares) and averages them per scenario and overall as its
``aggregated_data`` does: within a scenario an id counts once (its first record), and the overall
figure is the mean over those conversations. Records without a scenario are grouped under ``-``
(ToolEyes' pipeline needs one). A conversation on which ToolEyes' code raises has no tool
reality and is left out of that mean (counted). Reads a file; the scoring is ``tooleyes``'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.tooleyes import format_alignment, tool_reality

__all__ = ["MEASURES", "ToolEyesScores", "read_tooleyes"]

MEASURES = ("IF", "tool_reality", "Ans_pass", "neat_json_err", "neat_react_err")


@dataclass
class ToolEyesScores:
    """Per scenario (and ``overall``): each measure's mean and the conversations behind it."""

    means: dict[str, dict[str, float | None]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)


def read_tooleyes(path: Path) -> ToolEyesScores:
    """The scores of ToolEyes' inference output at ``path`` (module doc)."""
    by_scenario: dict[str, dict[str, dict[str, Any]]] = {}
    for record in _records(path):
        scenario = str(record.get("scenario") or "-")
        by_scenario.setdefault(scenario, {}).setdefault(str(record.get("id")), record)
    out = ToolEyesScores()
    everyone: list[dict[str, float | None]] = []
    for scenario, records in by_scenario.items():
        rows = [_row(r["conversations"]) for r in records.values()]
        everyone += rows
        _summarise(out, scenario, rows)
    _summarise(out, "overall", everyone)
    return out


def _records(path: Path) -> list[dict[str, Any]]:
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text)
        records = data if isinstance(data, list) else [data]
    except ValueError:
        try:
            records = [json.loads(line) for line in text.splitlines() if line.strip()]
        except ValueError as e:
            raise ValueError(f"{path}: neither a JSON list nor JSON lines ({e})") from e
    if not all(isinstance(r, dict) and isinstance(r.get("conversations"), list) for r in records):
        raise ValueError(f"{path}: records need a list of conversations (ToolEyes' inference)")
    return records


def _row(conversation: list[dict[str, Any]]) -> dict[str, float | None]:
    fa = format_alignment(conversation)
    try:
        reality: float | None = tool_reality(conversation)
    except NoReferenceValue:
        reality = None
    return {
        "IF": fa.score,
        "tool_reality": reality,
        "Ans_pass": float(fa.answer_pass),
        "neat_json_err": fa.neat_json_err,
        "neat_react_err": fa.neat_react_err,
    }


def _summarise(out: ToolEyesScores, name: str, rows: list[dict[str, float | None]]) -> None:
    means: dict[str, float | None] = {}
    for measure in MEASURES:
        values = [v for r in rows if (v := r[measure]) is not None]
        means[measure] = sum(values) / len(values) if values else None
    out.means[name] = means
    out.counts[name] = len(rows)
    out.left_out[name] = sum(1 for r in rows if r["tool_reality"] is None)
