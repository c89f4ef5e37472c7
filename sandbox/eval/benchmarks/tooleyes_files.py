"""ToolEyes' inference output scored by its rule-based arithmetic: ``sandbox rescore --tooleyes``.

ToolEyes' inference writes one record per query, ``{"id", "conversations", "path",
"scenario"}`` (its evaluation reads them as one JSON list; its inference appends JSON lines:
both are read). ``read_tooleyes`` scores every conversation (``tooleyes``: format alignment, tool
reality, Ans_pass and the neat error shares) and averages them per scenario and overall as its
``aggregated_data`` does: a scenario's conversations are, for each id its records name, the first
record of the whole file with that id, whatever scenario that record names (an id in two
scenarios is scored twice, on the same record); ids are told apart as Python's ``==`` tells them
(``1`` and ``"1"`` are two queries); a scenario's figure is the mean of its conversations, and the
overall figure is each scenario's mean times its count, summed in ToolEyes' scenario order (TG, RS,
DU, PL, AM, IR, FT) and divided by the total. Records without a scenario are grouped under ``-``,
and scenarios ToolEyes does not name come after its own (its pipeline raises on both). A
conversation on which ToolEyes' tool-reality code raises has no tool reality and is left out of
that mean (counted); one on which its format code raises, or that runs over a limit of
``record_limits``, is left out altogether (``skipped``, with the reasons). A file that is not
ToolEyes' (not a regular file, neither a JSON list nor JSON lines, a record that is not an object
with a list of conversations) is a ``ValueError`` naming the file and the record. The file is
read by ``sandbox.store.input_files``; the scoring is ``tooleyes``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.record_limits import LeftOut, each, too_large
from sandbox.eval.benchmarks.tooleyes import format_alignment, tool_reality
from sandbox.store.input_files import InputFileError, parse_json, read_input

__all__ = ["MEASURES", "ToolEyesScores", "read_tooleyes"]

MEASURES = ("IF", "tool_reality", "Ans_pass", "neat_json_err", "neat_react_err")


@dataclass
class ToolEyesScores:
    """Per scenario (and ``overall``): each measure's mean and the conversations behind it."""

    means: dict[str, dict[str, float | None]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    skipped: dict[str, int] = field(default_factory=dict)
    """Conversations left out altogether, by reason (ToolEyes' code raises, a limit)."""


SCENARIOS = ("TG", "RS", "DU", "PL", "AM", "IR", "FT")
"""ToolEyes' scenarios in the order its ``aggregated_data`` walks them (``tool_category``)."""


def read_tooleyes(path: Path) -> ToolEyesScores:
    """The scores of ToolEyes' inference output at ``path`` (module doc)."""
    records = _records(path)
    ids: dict[str, _Ids] = {}
    for record in records:
        ids.setdefault(_scenario(record), _Ids()).add(record.get("id"))
    order = [s for s in SCENARIOS if s in ids] + [s for s in ids if s not in SCENARIOS]
    out = ToolEyesScores()
    skipped = LeftOut()
    weighted: dict[str, float] = dict.fromkeys(MEASURES, 0.0)
    counted: dict[str, int] = dict.fromkeys(MEASURES, 0)
    for scenario in order:
        conversations = [r["conversations"] for r in _first_records(records, ids[scenario])]
        rows = each(conversations, _row, skipped, raises="ToolEyes' code raises")
        _summarise(out, scenario, rows)
        for measure in MEASURES:
            n = sum(1 for r in rows if r[measure] is not None)
            mean = out.means[scenario][measure]
            if mean is not None:
                weighted[measure] += mean * n
                counted[measure] += n
    out.means["overall"] = {m: weighted[m] / counted[m] if counted[m] else None for m in MEASURES}
    out.counts["overall"] = sum(out.counts.values())
    out.left_out["overall"] = sum(out.left_out.values())
    out.skipped = skipped.as_dict()
    return out


def _scenario(record: dict[str, Any]) -> str:
    return str(record.get("scenario") or "-")


class _Ids:
    """Ids in the order first seen, told apart as Python's ``in`` tells them (``1`` and ``"1"``
    are two ids; ``1`` and ``1.0`` one)."""

    def __init__(self) -> None:
        self._hashable: dict[Any, None] = {}
        self._other: list[Any] = []

    def add(self, value: Any) -> bool:
        """Add ``value``; False when it was there already."""
        if value in self:
            return False
        try:
            self._hashable[value] = None
        except TypeError:  # a list or object id: compared one by one
            self._other.append(value)
        return True

    def __contains__(self, value: Any) -> bool:
        try:
            return value in self._hashable
        except TypeError:
            return value in self._other


def _first_records(records: list[dict[str, Any]], wanted: _Ids) -> list[dict[str, Any]]:
    """Per id of a scenario, the first record of the file with that id, whatever its scenario
    (``aggregated_data``), in file order."""
    taken = _Ids()
    return [r for r in records if r.get("id") in wanted and taken.add(r.get("id"))]


def _records(path: Path) -> list[dict[str, Any]]:
    data = read_input(path)  # InputFileError (a ValueError) naming the file
    try:
        whole = parse_json(data, str(path))
        records = whole if isinstance(whole, list) else [whole]
        where = "item"
    except InputFileError as e:
        lines = [line for line in data.splitlines() if line.strip()]
        if len(lines) < 2:
            raise ValueError(f"{e} (neither a JSON list nor JSON lines)") from e
        records = [parse_json(line, f"{path}: line {n}") for n, line in enumerate(lines, 1)]
        where = "line"
    for n, record in enumerate(records, 1):
        if not isinstance(record, dict):
            problem = f"is a {type(record).__name__}, not an object"
        elif not isinstance(record.get("conversations"), list):
            problem = "has no list of conversations"
        else:
            continue
        raise ValueError(
            f"{path}: {where} {n} {problem} (ToolEyes' inference writes records of id, "
            "conversations, path and scenario)"
        )
    return records


def _row(conversation: list[dict[str, Any]]) -> dict[str, float | None]:
    for message in conversation:
        too_large(message.get("value") if isinstance(message, dict) else None, "a message")
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
