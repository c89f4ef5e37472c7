"""T-Eval's prediction files scored by T-Eval's arithmetic: ``sandbox rescore --teval DIR``.

T-Eval's ``test.py`` writes, per evaluation, one JSON file ``<out_dir>/<out_name>``: an object
of samples by id, each with ``origin_prompt``, ``template``, ``prediction``, ``ground_truth`` and
``meta_data`` (``meta`` for plans). Its scripts (``test_all_en.sh``, ``test_all_zh.sh``) name
them by evaluation and model: ``instruct_<model>.json``, ``plan_json_<model>.json``,
``plan_str_<model>.json``, ``reason_str_<model>.json``, ``retrieve_str_<model>.json``,
``understand_str_<model>.json``, ``reason_retrieve_understand_json_<model>.json`` and
``review_str_<model>.json``. ``read_teval`` finds those files in a folder, groups them by model,
scores each as its evaluator does (``teval``, ``teval_plan``) and keeps the figures under
T-Eval's result keys (``instruct_json``, ``plan_str``, ..., ``rru_json``), from which
``teval_table`` makes the table ``convert_results.py`` prints.

A sample on which T-Eval's code raises is left out and counted (``left_out``): T-Eval would stop
on the whole file. Reads files; the scoring is ``teval``'s.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sandbox.eval.benchmarks.record_limits import LeftOut, each, too_large
from sandbox.eval.benchmarks.rounding import np_round
from sandbox.eval.benchmarks.teval import (
    Cosine,
    instruct_sample,
    mean,
    review_sample,
    rru_sample,
    teval_table,
)
from sandbox.eval.benchmarks.teval_plan import PlanOptions, plan_sample
from sandbox.store.input_files import read_json

__all__ = ["FILES", "TevalModel", "read_teval", "score_file"]


@dataclass(frozen=True)
class FileKind:
    key: str
    """T-Eval's result key (``<eval>_<prompt_type>``, ``rru_json`` for the joint file)."""
    evaluator: str
    default_format: str
    eval_type: str = "rru"


FILES: dict[str, FileKind] = {
    "reason_retrieve_understand_json_": FileKind("rru_json", "rru", "json"),
    "instruct_": FileKind("instruct_json", "instruct", "json"),
    "plan_json_": FileKind("plan_json", "plan", "json"),
    "plan_str_": FileKind("plan_str", "plan", "str"),
    "reason_str_": FileKind("reason_str", "rru", "str", "reason"),
    "retrieve_str_": FileKind("retrieve_str", "rru", "str", "retrieve"),
    "understand_str_": FileKind("understand_str", "rru", "str", "understand"),
    "review_str_": FileKind("review_str", "review", "str"),
}
"""File name prefixes of T-Eval's scripts, longest first."""


@dataclass
class TevalModel:
    """One model's files: the figures per result key and T-Eval's table."""

    name: str
    results: dict[str, dict[str, float]] = field(default_factory=dict)
    samples: dict[str, int] = field(default_factory=dict)
    left_out: dict[str, int] = field(default_factory=dict)
    left_out_reasons: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def table(self) -> dict[str, float]:
        return teval_table(self.results)


def _kind(name: str) -> tuple[FileKind, str] | None:
    for prefix, kind in FILES.items():
        if name.startswith(prefix) and name.endswith(".json"):
            return kind, name[len(prefix) : -len(".json")]
    return None


def read_teval(folder: Path, cosine: Cosine) -> list[TevalModel]:
    """Every model's T-Eval files in ``folder`` (not its subfolders), scored; ``ValueError``
    naming the file for one that is not T-Eval's samples object."""
    models: dict[str, TevalModel] = {}
    for path in sorted(p for p in folder.iterdir() if not p.is_dir()):
        found = _kind(path.name)
        if found is None:
            continue
        kind, model = found
        data = _samples(path)
        entry = models.setdefault(model, TevalModel(model))
        left = LeftOut()
        figures, scored, _ = score_file(kind, data, cosine, left)
        entry.results[kind.key] = figures
        entry.samples[kind.key] = scored
        entry.left_out[kind.key] = len(left)
        entry.left_out_reasons[kind.key] = left.as_dict()
    return list(models.values())


def _samples(path: Path) -> dict[str, Any]:
    """The samples of a T-Eval file: an object of objects; ``ValueError`` naming the file and
    the first sample that is not one."""
    data = read_json(path)  # InputFileError, a ValueError naming the file
    if not isinstance(data, dict):
        raise ValueError(
            f"{path}: not a T-Eval prediction file (an object of samples by id, not a "
            f"{type(data).__name__})"
        )
    for key, sample in data.items():
        if not isinstance(sample, dict):
            raise ValueError(
                f"{path}: sample {key!r} is a {type(sample).__name__}, not an object (T-Eval's "
                "prediction, ground_truth, template, meta_data)"
            )
    return data


def score_file(
    kind: FileKind,
    data: Mapping[str, Mapping[str, Any]],
    cosine: Cosine,
    left_out: LeftOut | None = None,
) -> tuple[dict[str, float], int, int]:
    """``(figures, samples scored, samples left out)`` of one file, as its evaluator gives (the
    reasons of those left out counted in ``left_out``)."""
    scorer: Callable[[Mapping[str, Any]], dict[str, float]] = {
        "instruct": _instruct,
        "plan": lambda d: _plan(d, cosine, kind.default_format),
        "rru": lambda d: _rru(d, cosine, kind),
        "review": _review,
    }[kind.evaluator]
    left = LeftOut() if left_out is None else left_out

    def bounded(datum: Mapping[str, Any]) -> dict[str, float]:
        too_large(datum.get("prediction"), "a reply")
        template = datum.get("template")
        for part in template.values() if isinstance(template, dict) else [template]:
            too_large(part, "a template")
        return scorer(datum)

    rows = each(data.values(), bounded, left, raises="T-Eval's code raises")
    return _post_process(kind, rows), len(rows), len(left)


def _instruct(datum: Mapping[str, Any]) -> dict[str, float]:
    """Keyed by the sample's own ``response_format``, as T-Eval keys it: only ``json`` and
    ``string`` samples reach its figures (a sample marked ``str`` is read in the string format
    but averaged nowhere, so T-Eval's string figures are nan without ``string`` samples)."""
    score = instruct_sample(datum)
    fmt = score.response_format
    return {f"{fmt}_format_metric": score.format, f"{fmt}_args_em_metric": score.args_em}


def _plan(datum: Mapping[str, Any], cosine: Cosine, default_format: str) -> dict[str, float]:
    score = plan_sample(datum, cosine, PlanOptions(), default_format)
    return {
        "precision": score.precision,
        "recall": score.recall,
        "f1_score": score.f1,
        "parse_rate": score.parse_rate,
    }


def _rru(datum: Mapping[str, Any], cosine: Cosine, kind: FileKind) -> dict[str, float]:
    score = rru_sample(datum, cosine, default_format=kind.default_format, eval_type=kind.eval_type)
    return {
        "thought": score.thought,
        "name": score.name,
        "args": score.args,
        "parse_rate": score.parse_rate,
    }


def _review(datum: Mapping[str, Any]) -> dict[str, float]:
    quality, parse = review_sample(datum)
    return {"parse_rate": parse, "review_quality": quality}


_RRU_KEYS = {
    "rru": ("thought", "name", "args", "parse_rate"),
    "reason": ("thought", "parse_rate"),
    "retrieve": ("name", "parse_rate"),
    "understand": ("args", "parse_rate"),
}
_KEYS = {
    "instruct": (
        "json_format_metric",
        "json_args_em_metric",
        "string_format_metric",
        "string_args_em_metric",
    ),
    "plan": ("precision", "recall", "f1_score", "parse_rate"),
    "review": ("parse_rate", "review_quality"),
}
_ROUNDED = ("instruct", "review")


def _post_process(kind: FileKind, rows: list[dict[str, float]]) -> dict[str, float]:
    """Each key's mean over the samples that have it (nan without any); instruct and review
    rounded to 4 places as their evaluators round them."""
    keys = _RRU_KEYS[kind.eval_type] if kind.evaluator == "rru" else _KEYS[kind.evaluator]
    out = {}
    for key in keys:
        value = mean([r[key] for r in rows if key in r])
        out[key] = np_round(value) if kind.evaluator in _ROUNDED else value
    return out
