"""UltraTool's prediction files scored by UltraTool's arithmetic: ``sandbox rescore --ultratool``.

UltraTool keeps one folder per model (``predictions/<language>/<model>/``) with one JSON-lines
file per task: ``tool_usage.json`` (argument accuracy, ``cal_param_res``),
``tool_selection.json`` (``cal_acc_for_select``), ``tool_usage_awareness.json`` and
``tool_creation_awareness.json`` (``cal_acc_for_aware``). Each record holds the reference and the
model's reply (``ultratool_parse``: GPT models' layout or the others'). ``read_ultratool`` takes
a model folder, or a folder of model folders, and gives per model the figures UltraTool's scripts
print (rounded to 4 places as they round them) and how many replies were bad JSON.

A sample on which UltraTool's code raises is left out and counted (``left_out``, the reasons in
``left_out_reasons``): UltraTool would stop on the whole file; so is one that runs over a limit
of ``record_limits``. A line that is not JSON or not an object is a ``ValueError`` naming the
file and the line. Files are read by ``sandbox.store.input_files`` (bounded, regular files
only); the scoring is ``ultratool``'s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.eval.benchmarks.record_limits import LeftOut, each
from sandbox.eval.benchmarks.rounding import np_round, py_round
from sandbox.eval.benchmarks.ultratool import (
    aware_lists,
    list_accuracy,
    param_accuracy,
    param_scores,
    select_lists,
)
from sandbox.eval.benchmarks.ultratool_parse import Collected, collect
from sandbox.store.input_files import json_lines

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
    left_out_reasons: dict[str, int] = field(default_factory=dict)


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
    return any((folder / f"{task}.json").exists() for task in TASKS)


def _model(folder: Path) -> UltraToolModel:
    model = UltraToolModel(folder.name)
    for task, kind in TASKS.items():
        path = folder / f"{task}.json"
        if path.exists():
            left = LeftOut()
            read = collect(_records(path), "param" if kind == "param" else "aware", left)
            model.tasks[task] = score_task(kind, read, left)
    return model


def _records(path: Path) -> list[dict[str, Any]]:
    """The records of one file: JSON lines, each an object (``ValueError`` naming the line)."""
    records = []
    for number, record in json_lines(path):
        if not isinstance(record, dict):
            raise ValueError(
                f"{path}: line {number} is a {type(record).__name__}, not an object (an "
                "UltraTool record)"
            )
        records.append(record)
    return records


def score_task(kind: str, read: Collected, left: LeftOut | None = None) -> TaskFigures:
    """One file's figures as UltraTool's script prints them (``kind``: param, select or aware);
    a sample UltraTool's code raises on is left out and counted in ``left``."""
    left = LeftOut() if left is None else left
    samples = list(zip(read.preds, read.goldens, strict=True))
    kept: list[Any] = each(
        samples, lambda s: _sample(kind, s[0], s[1]), left, raises="UltraTool's code raises"
    )
    if kind == "param":
        flat = param_accuracy([(p, g) for p, g in kept])
        return TaskFigures(np_round(flat), None, len(kept), read.bad, len(left), left.as_dict())
    figures = list_accuracy(kept)
    return TaskFigures(
        np_round(figures.element_accuracy),  # scikit-learn's accuracy_score: a numpy float
        py_round(figures.list_accuracy),  # sum(...) / len(...): a Python float
        len(kept),
        read.bad,
        len(left),
        left.as_dict(),
    )


def _sample(kind: str, pred: Any, golden: Any) -> Any:
    if kind == "param":
        param_scores(pred, golden)  # raises where UltraTool does
        return pred, golden
    return (select_lists if kind == "select" else aware_lists)(pred, golden)
