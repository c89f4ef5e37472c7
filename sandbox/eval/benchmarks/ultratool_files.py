"""UltraTool's prediction files scored by UltraTool's arithmetic: ``sandbox rescore --ultratool``.

UltraTool keeps one folder per model (``predictions/<language>/<model>/``) with one JSON-lines
file per task: ``tool_usage.json`` (argument accuracy, ``cal_param_res``),
``tool_selection.json`` (``cal_acc_for_select``), ``tool_usage_awareness.json`` and
``tool_creation_awareness.json`` (``cal_acc_for_aware``). Each record holds the reference and the
model's reply (``ultratool_parse``: GPT models' layout or the others'). ``read_ultratool`` takes
a model folder, or a folder of model folders, and gives per model the figures UltraTool's scripts
print (rounded to 4 places as they round them) and how many replies were bad JSON.

A sample on which UltraTool's code raises is left out and counted (``left_out``): UltraTool would
stop on the whole file. Reads files; the scoring is ``ultratool``'s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.rounding import np_round, py_round
from sandbox.eval.benchmarks.ultratool import (
    aware_lists,
    list_accuracy,
    param_accuracy,
    param_scores,
    select_lists,
)
from sandbox.eval.benchmarks.ultratool_parse import Collected, collect

__all__ = ["TASKS", "UltraToolModel", "read_ultratool", "score_task"]

TASKS: dict[str, str] = {
    "tool_usage": "param",
    "tool_selection": "select",
    "tool_usage_awareness": "aware",
    "tool_creation_awareness": "aware",
}
"""UltraTool's file names (without ``.json``) and how each is scored."""


@dataclass
class TaskFigures:
    """One file's figures: ``local`` (per step) and ``global_`` (per sample, not for usage)."""

    local: float
    global_: float | None
    samples: int
    bad_json: int
    left_out: int


@dataclass
class UltraToolModel:
    name: str
    tasks: dict[str, TaskFigures] = field(default_factory=dict)


def read_ultratool(folder: Path) -> list[UltraToolModel]:
    """Every model's UltraTool files under ``folder`` (module doc), scored."""
    if _has_files(folder):
        return [_model(folder)]
    return [_model(d) for d in sorted(folder.iterdir()) if d.is_dir() and _has_files(d)]


def _has_files(folder: Path) -> bool:
    return any((folder / f"{task}.json").is_file() for task in TASKS)


def _model(folder: Path) -> UltraToolModel:
    model = UltraToolModel(folder.name)
    for task, kind in TASKS.items():
        path = folder / f"{task}.json"
        if path.is_file():
            read = collect(_records(path), "param" if kind == "param" else "aware")
            model.tasks[task] = score_task(kind, read)
    return model


def _records(path: Path) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            records.append(json.loads(line))
        except ValueError as e:
            raise ValueError(f"{path}: line {number} is not JSON ({e})") from e
    return records


def score_task(kind: str, read: Collected) -> TaskFigures:
    """One file's figures as UltraTool's script prints them (``kind``: param, select or aware)."""
    samples = list(zip(read.preds, read.goldens, strict=True))
    kept: list[Any] = []
    left = 0
    for pred, golden in samples:
        try:
            kept.append(_sample(kind, pred, golden))
        except (NoReferenceValue, KeyError, TypeError):
            left += 1
    if kind == "param":
        flat = param_accuracy([(p, g) for p, g in kept])
        return TaskFigures(np_round(flat), None, len(kept), read.bad, left)
    figures = list_accuracy(kept)
    return TaskFigures(
        np_round(figures.element_accuracy),  # scikit-learn's accuracy_score: a numpy float
        py_round(figures.list_accuracy),  # sum(...) / len(...): a Python float
        len(kept),
        read.bad,
        left,
    )


def _sample(kind: str, pred: Any, golden: Any) -> Any:
    if kind == "param":
        param_scores(pred, golden)  # raises where UltraTool does
        return pred, golden
    return (select_lists if kind == "select" else aware_lists)(pred, golden)
