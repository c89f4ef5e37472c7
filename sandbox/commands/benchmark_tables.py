"""``sandbox rescore --teval DIR | --ultratool DIR | --tooleyes FILE``: a benchmark's own
prediction files, scored by its own arithmetic (``sandbox.eval.benchmarks``), printed as the
benchmark prints them (or as one JSON line with ``--json``).

T-Eval's table is ``convert_results.py``'s (each dimension ×100 to one decimal), with the
figures of every file above it; UltraTool's, its scripts' figures per task (rounded to 4
places); ToolEyes', its rule-based scores per scenario and overall. Files of another layout are
a one-line error (exit 1).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

from rich.table import Table

from sandbox.commands.console import stdout_console
from sandbox.errors import RunError

__all__ = ["add_benchmark_flags", "benchmark_mode", "score_benchmark_files"]

MODES = ("teval", "ultratool", "tooleyes")


def add_benchmark_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "another benchmark's predictions (instead of RUN)",
        "score the files a benchmark's own inference wrote, by that benchmark's arithmetic",
    )
    group.add_argument(
        "--teval", metavar="DIR", help="T-Eval's prediction files (instruct_<model>.json, ...)"
    )
    group.add_argument(
        "--ultratool",
        metavar="DIR",
        help="UltraTool's predictions: a model folder (tool_usage.json, ...) or a folder of them",
    )
    group.add_argument(
        "--tooleyes", metavar="FILE", help="ToolEyes' inference output (conversations per query)"
    )


def benchmark_mode(args: argparse.Namespace) -> str | None:
    """The benchmark whose files ``args`` name (None: a run); ``ConfigError`` for two of them or
    one next to RUN, ``RunError`` for neither."""
    from sandbox.errors import ConfigError

    chosen = [m for m in MODES if getattr(args, m, None)]
    if len(chosen) > 1:
        raise ConfigError(f"give one of --{', --'.join(MODES)}, not {len(chosen)}")
    if chosen and args.run:
        raise ConfigError(f"--{chosen[0]} scores a benchmark's files: give it without RUN")
    if not chosen and not args.run:
        raise RunError("give a run folder (runs/<run-id>) or --teval/--ultratool/--tooleyes")
    return chosen[0] if chosen else None


def score_benchmark_files(
    mode: str, args: argparse.Namespace, similarity: str, json_line: bool
) -> int:
    path = Path(getattr(args, mode))
    if not path.exists():
        raise RunError(f"no {mode} predictions at {path}")
    try:
        data = _score(mode, path, similarity)
    except ValueError as e:
        raise RunError(str(e)) from e
    if not data["models"]:
        raise RunError(f"no {mode} prediction files in {path} (docs/evaluation.md, their layout)")
    if json_line:
        sys.stdout.write(json.dumps(data, default=_nan_free) + "\n")
    else:
        console = stdout_console()
        for table in _tables(mode, data):
            console.print(table)
    return 0


def _nan_free(value: Any) -> Any:
    return None


def _score(mode: str, path: Path, similarity: str) -> dict[str, Any]:
    if mode == "teval":
        from sandbox.eval.benchmarks.teval_files import read_teval
        from sandbox.eval.steps.reason_score import cosine_of, similarity_label, thought_similarity

        kind, _, model = similarity.partition(":")
        backend = thought_similarity(kind, model or None)
        models = read_teval(path, cosine_of(backend))
        return {
            "benchmark": "teval",
            "similarity": similarity_label(backend),
            "models": {
                m.name: {
                    "table": _clean(m.table),
                    "results": {k: _clean(v) for k, v in m.results.items()},
                    "samples": m.samples,
                    "left_out": m.left_out,
                    "left_out_reasons": m.left_out_reasons,
                }
                for m in models
            },
        }
    if mode == "ultratool":
        from sandbox.eval.benchmarks.ultratool_files import read_ultratool

        return {
            "benchmark": "ultratool",
            "models": {
                m.name: {task: vars(f) for task, f in m.tasks.items()} for m in read_ultratool(path)
            },
        }
    from sandbox.eval.benchmarks.tooleyes_files import read_tooleyes

    scores = read_tooleyes(path)
    return {
        "benchmark": "tooleyes",
        "models": {path.stem: {"means": scores.means, "counts": scores.counts}},
        "left_out": scores.left_out,
        "skipped": scores.skipped,
    }


def _clean(figures: dict[str, float]) -> dict[str, float | None]:
    return {k: None if math.isnan(v) else v for k, v in figures.items()}


def _cell(value: float | None, scale: float = 1.0, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value * scale:.{digits}f}"


def _tables(mode: str, data: dict[str, Any]) -> list[Table]:
    tables = []
    for model, body in data["models"].items():
        if mode == "teval":
            tables += _teval_tables(model, body, data["similarity"])
        elif mode == "ultratool":
            tables.append(_ultratool_table(model, body))
        else:
            tables.append(_tooleyes_table(model, body, data["left_out"], data["skipped"]))
    return tables


def _teval_tables(model: str, body: dict[str, Any], similarity: str) -> list[Table]:
    files = Table(title=f"T-Eval files: {model}")
    for head in ("result", "metric", "value", "samples"):
        files.add_column(head, justify="left" if head in ("result", "metric") else "right")
    for key, figures in body["results"].items():
        left = body["left_out"].get(key, 0)
        count = str(body["samples"][key]) + (f" ({left} left out)" if left else "")
        for metric, value in figures.items():
            files.add_row(key, metric, _cell(value), count)
    summary = Table(title=f"T-Eval: {model}")
    for name in body["table"]:
        summary.add_column(name, justify="right")
    summary.add_row(*(_cell(v, 100, 1) for v in body["table"].values()))
    summary.caption = f"cosines by {similarity}; n/a: a file the table needs is missing"
    reasons = _reasons(r for by_key in body["left_out_reasons"].values() for r in by_key.items())
    if reasons:
        files.caption = f"left out: {reasons}"
    return [files, summary]


def _reasons(pairs: Any) -> str:
    """``reason (count); ...`` over ``(reason, count)`` pairs, equal reasons added up."""
    total: dict[str, int] = {}
    for reason, count in pairs:
        total[reason] = total.get(reason, 0) + count
    return "; ".join(f"{reason} ({count})" for reason, count in total.items())


def _ultratool_table(model: str, body: dict[str, Any]) -> Table:
    table = Table(title=f"UltraTool: {model}")
    for head in ("task", "global level", "local level", "samples", "bad json", "left out"):
        table.add_column(head, justify="left" if head == "task" else "right")
    for task, f in body.items():
        table.add_row(
            task,
            _cell(f["global_"]) if f["global_"] is not None else "—",
            _cell(f["local"]),
            str(f["samples"]),
            str(f["bad_json"]),
            str(f["left_out"]),
        )
    table.caption = "tool_usage: Levenshtein (local level); the others: accuracy"
    reasons = _reasons(r for f in body.values() for r in f["left_out_reasons"].items())
    if reasons:
        table.caption += f"; left out: {reasons}"
    return table


def _tooleyes_table(
    model: str, body: dict[str, Any], left_out: dict[str, int], skipped: dict[str, int]
) -> Table:
    table = Table(title=f"ToolEyes (rule-based scores): {model}")
    table.add_column("scenario")
    first = next(iter(body["means"].values()))
    for measure in first:
        table.add_column(measure, justify="right")
    table.add_column("conversations", justify="right")
    for scenario, means in body["means"].items():
        count = str(body["counts"][scenario])
        if left_out.get(scenario):
            count += f" ({left_out[scenario]} without tool reality)"
        table.add_row(scenario, *(_cell(v) for v in means.values()), count)
    table.caption = "IF: format alignment; the GPT-4-judged scores are not computed"
    if skipped:
        table.caption += f"; left out: {_reasons(skipped.items())}"
    return table
