"""T-Eval's instruct, reason / retrieve / understand and review scores, per sample and overall.

T-Eval (Chen et al. 2024; open-compass/T-Eval at its current evaluators, the "v2" protocol of
February 2024), ``teval/evaluators/``. A *sample* is one datum of T-Eval's files: ``prediction``
(the model's reply), ``ground_truth``, ``template`` and ``meta_data`` (``response_format``:
``json`` or ``str``).

- **instruct** (``instruct_evaluator.py``, ``InstructEvaluator``): a ``json`` reply is read with
  ``format_load`` and must have the template's thought, action and args keys (args that are not an
  object become ``{}``); a ``str`` reply must match the template's
  ``thought_start{thought}thought_end action_start{action}action_end args_start{args}args_end``
  (args read with ``ast.literal_eval``, ``{}`` when that fails or is not an object). Unreadable:
  format 0 and args 0. Readable: format 1 and ``args_em`` = (1 for the same action name + one per
  ground-truth key whose predicted value ``==`` it, a missing key read as ``""``) / (keys + 1).
  Kept quirk: a ground-truth value ``""`` matches a missing key; ``1 == 1.0 == True``.
- **reason / retrieve / understand** (``reason_retrieve_understand_evaluator.py``,
  ``ReasonRetrieveUnderstandEvaluator``): ``json`` replies are read with ``format_load`` between
  the first ``{`` and the last ``}``; ``thought`` and ``name`` become ``str()``, ``args`` stays an
  object (else ``{}``). thought: the cosine of the two thoughts' embeddings, at least 0; name:
  equality (``str`` format: the gold name occurs in the reply and no other ``a.b`` name or
  ``FinishAction`` does); args (v2): per gold key, ``str(pred) == str(gold)``, summed and divided
  by ``keys + 1e-5`` (kept: a perfect answer scores 0.99999 per key-count), 1 when both are empty,
  0 when only the gold is; ``str`` format: the reply without surrounding quotes equals
  ``str(gold args)``. ``parse_rate``: the reply was read. An unreadable reply scores 0 on all.
  ``understand="v1"`` is the December 2023 evaluator: the cosine of ``str(pred args)`` and
  ``str(gold args)`` embeddings.
- **review** (``review_evaluator.py``, ``ReviewEvaluator``): ``str``: the reply after its first
  ``:`` (all of it without one), stripped; its first character when it is one of A–E, else
  unreadable; ``json``: ``{"review": is_finished}`` when ``is_finished`` is ``in [True, False]``
  (so 0 and 1 pass). ``review_quality``: that equals ``ground_truth["answer"]``.

Means are over samples, taken as ``numpy.mean`` takes them (``rounding.np_mean``: the same values
in the same order, summed pairwise); instruct and review are printed rounded to 4 places
(``np.round``), as ``InstructEvaluator`` / ``ReviewEvaluator`` round them; plan and RRU are not
rounded.
``teval_table`` is ``teval/utils/convert_results.py``: the six dimensions and their overall mean.

The embedding cosine is the caller's ``Cosine`` (same wiring, any encoder). Pure.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.rounding import np_mean
from sandbox.eval.benchmarks.teval_parse import FormatLoadError, format_load, parse_string

__all__ = [
    "UNDERSTAND_EPSILON",
    "Cosine",
    "cosine_matrix",
    "InstructScore",
    "RruScore",
    "instruct_sample",
    "mean",
    "read_rru",
    "review_sample",
    "rru_sample",
    "teval_table",
]

Cosine = Callable[[str, str], float]
"""The embedding cosine of two texts (T-Eval: ``util.cos_sim`` of sentence embeddings); T-Eval
clips it at 0 (``np.maximum(cos, 0)``), which the functions here do. A cosine may also have a
``matrix(a, b)`` method: the cosines of two lists of texts as one float32 array, each list
encoded in one batch (``cosine_matrix``)."""


def cosine_matrix(cosine: Cosine, a: Sequence[str], b: Sequence[str]) -> Any:
    """``util.cos_sim(encode(a), encode(b)).cpu().numpy()`` as T-Eval's plan score makes it: the
    cosine's own ``matrix`` when it has one (an encoder: each list encoded in one batch, the
    matrix multiplied as the library multiplies it, so the last bits of tied entries are the
    library's), else its pairwise values as a float32 array (what an encoder returns). numpy is
    imported here."""
    import numpy as np  # heavy: only for a plan score

    matrix = getattr(cosine, "matrix", None)
    if callable(matrix):
        return np.asarray(matrix(list(a), list(b)))
    return np.array([[cosine(x, y) for y in b] for x in a], dtype=np.float32).reshape(
        len(a), len(b)
    )


UNDERSTAND_EPSILON = 1e-5
"""T-Eval's v2 understand divides by ``keys + 1e-5``."""
_A_DOT_B = re.compile(r"\w+\.\w+")
_FINISH_ACTION = "FinishAction"
REVIEW_LETTERS = ("A", "B", "C", "D", "E")


def clipped(cosine: Cosine, a: str, b: str) -> float:
    return max(float(cosine(a, b)), 0.0)


# -- instruct -------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstructScore:
    response_format: str
    format: float
    args_em: float


def instruct_sample(datum: Mapping[str, Any]) -> InstructScore:
    """``InstructEvaluator._evaluate`` of one datum (module doc)."""
    fmt = datum["meta_data"]["response_format"]
    template = datum["template"]
    parsed = (
        _instruct_json(datum["prediction"], template)
        if fmt == "json"
        else _instruct_string(datum["prediction"], template)
    )
    if parsed is None:
        return InstructScore(fmt, 0.0, 0.0)
    gt = datum["ground_truth"]
    return InstructScore(
        fmt, 1.0, args_em(gt["action"], parsed["action"], gt["args"], parsed["args"])
    )


def args_em(gt_action: Any, pred_action: Any, gt_args: Mapping[str, Any], pred_args: Any) -> float:
    """``compute_args_em_metric``: name match plus exact values, over keys + 1."""
    hits = 1.0 if gt_action == pred_action else 0.0
    for key in gt_args:
        if pred_args.get(key, "") == gt_args[key]:
            hits += 1.0
    return hits / (len(gt_args) + 1)


def _instruct_json(prediction: Any, template: Mapping[str, str]) -> dict[str, Any] | None:
    try:
        data = format_load(prediction)
        args = data[template["args"]]
        return {
            "thought": data[template["thought"]],
            "action": data[template["action"]],
            "args": args if isinstance(args, dict) else {},
        }
    except Exception:  # noqa: BLE001 - T-Eval: any failure is an unreadable reply
        return None


def _instruct_string(prediction: str, template: Mapping[str, str]) -> dict[str, Any] | None:
    pattern = (
        template["thought_start"] + "{thought}" + template["thought_end"]
        + template["action_start"] + "{action}" + template["action_end"]
        + template["args_start"] + "{args}" + template["args_end"]
    )  # fmt: skip
    found = parse_string(pattern, prediction, allow_newline=True)
    if found is None:
        return None
    try:
        args = ast.literal_eval(found["args"].strip())
        found["args"] = args if isinstance(args, dict) else {}
        found["action"] = found["action"].strip()
        return found
    except Exception:  # noqa: BLE001 - T-Eval falls back to empty arguments
        pass
    try:
        return {"thought": found["thought"], "action": found["action"].strip(), "args": {}}
    except (KeyError, AttributeError) as e:
        raise NoReferenceValue(f"T-Eval's instruct parser raises on this reply: {e!r}") from e


# -- reason / retrieve / understand ------------------------------------------------------------


@dataclass(frozen=True)
class RruScore:
    thought: float
    name: float
    args: float
    parse_rate: float


def read_rru(data: Any, prompt_type: str) -> dict[str, Any]:
    """``ReasonRetrieveUnderstandEvaluator.format_load``: ``{}`` when unreadable."""
    try:
        loaded = format_load(data, start="{", end="}")
    except FormatLoadError:
        return {}
    if not isinstance(loaded, dict):
        return {}
    out: dict[str, Any] = {}
    for key in ("thought", "name"):
        try:
            out[key] = str(loaded[key])
        except Exception:  # noqa: BLE001 - a key missing (or a str() that raises): ''
            out[key] = ""
    if prompt_type == "json":
        args = loaded.get("args")
        out["args"] = args if isinstance(args, dict) else {}
    else:
        out["args"] = str(loaded["args"]) if "args" in loaded else ""
    return out


def rru_sample(
    datum: Mapping[str, Any],
    cosine: Cosine,
    *,
    default_format: str = "json",
    eval_type: str = "rru",
    understand: str = "v2",
) -> RruScore:
    """One datum of ``ReasonRetrieveUnderstandEvaluator`` (module doc); ``default_format`` is the
    evaluator's ``default_prompt_type``, ``eval_type`` its ``eval_type`` (for ``str`` replies)."""
    meta = datum.get("meta_data")
    fmt = meta.get("response_format", default_format) if meta is not None else default_format
    gt = read_rru(datum["ground_truth"], default_format)
    if fmt == "json":
        pred = read_rru(datum["prediction"], default_format)
        if not pred or not gt:
            pred = {}
    elif fmt == "str":
        key = {"reason": "thought", "retrieve": "name", "understand": "args"}.get(eval_type)
        pred = {key: datum["prediction"]} if key else {}
    else:
        raise NoReferenceValue(f"T-Eval reads only json and str replies, not {fmt!r}")
    thought = clipped(cosine, pred["thought"], gt["thought"]) if _both(pred, gt, "thought") else 0.0
    name = _name_score(pred["name"], gt["name"], default_format) if _both(pred, gt, "name") else 0.0
    args = _args_score(pred, gt, cosine, understand) if _both(pred, gt, "args") else 0.0
    return RruScore(thought=thought, name=name, args=args, parse_rate=1.0 if pred else 0.0)


def _both(pred: Mapping[str, Any], gt: Mapping[str, Any], key: str) -> bool:
    return key in pred and key in gt


def _name_score(pred: Any, gold: str, default_format: str) -> float:
    if default_format == "json":
        return 1.0 if pred == gold else 0.0
    if not isinstance(pred, str):
        raise NoReferenceValue("T-Eval's str-format retrieve searches a reply that is no text")
    if gold not in pred:
        return 0.0
    named = _A_DOT_B.findall(pred) + re.findall(_FINISH_ACTION, pred)
    return 0.0 if any(n != gold for n in named) else 1.0


def _args_score(
    pred: Mapping[str, Any], gt: Mapping[str, Any], cosine: Cosine, understand: str
) -> float:
    pred_args, gold_args = pred["args"], gt["args"]
    if understand == "v1":
        return clipped(cosine, str(pred_args), str(gold_args))
    if not isinstance(gold_args, dict):
        if not isinstance(pred_args, str):
            raise NoReferenceValue("T-Eval strips quotes off arguments that are no text")
        return 1.0 if gold_args == pred_args.strip("'").strip('"') else 0.0
    try:
        hits = sum(
            1 for k in gold_args if k in pred_args and str(pred_args[k]) == str(gold_args[k])
        )
        pred_empty = len(pred_args) == 0
    except TypeError as e:  # a reply read as text indexed by key
        raise NoReferenceValue(f"T-Eval's understand raises on these arguments: {e}") from e
    if not gold_args:
        return 1.0 if pred_empty else 0.0
    return hits / (len(gold_args) + UNDERSTAND_EPSILON)


# -- review ------------------------------------------------------------------------------------


def review_prediction(prediction: Any, response_format: str) -> Any:
    """``ReviewEvaluator._process_response``'s reading of a reply (None: unreadable)."""
    if response_format == "json":
        try:
            data = format_load(prediction)
            verdict = data["is_finished"]
        except Exception:  # noqa: BLE001 - T-Eval: any failure is unreadable
            return None
        try:
            return {"review": verdict} if verdict in [True, False] else None
        except Exception:  # noqa: BLE001 - a value whose == raises: unreadable
            return None
    if not isinstance(prediction, str):
        raise NoReferenceValue("T-Eval's str-format review slices a reply that is no text")
    text = prediction[prediction.find(":") + 1 :].strip()
    return text[0] if text and text[0] in REVIEW_LETTERS else None


def review_sample(datum: Mapping[str, Any]) -> tuple[float, float]:
    """``(review_quality, parse_rate)`` of one datum."""
    pred = review_prediction(datum["prediction"], datum["meta_data"]["response_format"])
    if pred is None:
        return 0.0, 0.0
    return (1.0 if pred == datum["ground_truth"]["answer"] else 0.0), 1.0


# -- aggregation -------------------------------------------------------------------------------


def mean(values: Sequence[float]) -> float:
    """``numpy.mean``, as T-Eval takes every mean (numpy's pairwise sum): nan for no values."""
    return np_mean(values)


TABLE_ROWS = ("Overall", "Instruct", "Plan", "Reason", "Retrieve", "Understand", "Review")


def teval_table(results: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """``convert_results``: each dimension is the mean of its json and str figures; ``results``
    keyed as T-Eval's result file (``instruct_json``, ``plan_str``, ``plan_json``,
    ``reason_str``, ``retrieve_str``, ``understand_str``, ``rru_json``, ``review_str``); a figure
    that is missing is nan, and so is every mean it enters."""

    def get(key: str, metric: str) -> float:
        return float(results.get(key, {}).get(metric, float("nan")))

    ins = results.get("instruct_json", {})
    nan = float("nan")
    rows = {
        "Instruct": mean(
            [
                (ins.get("json_format_metric", nan) + ins.get("json_args_em_metric", nan)) / 2,
                (ins.get("string_format_metric", nan) + ins.get("string_args_em_metric", nan)) / 2,
            ]
        ),
        "Plan": mean([get("plan_str", "f1_score"), get("plan_json", "f1_score")]),
        "Reason": mean([get("reason_str", "thought"), get("rru_json", "thought")]),
        "Retrieve": mean([get("retrieve_str", "name"), get("rru_json", "name")]),
        "Understand": mean([get("understand_str", "args"), get("rru_json", "args")]),
        "Review": mean([get("review_str", "review_quality"), get("review_str", "review_quality")]),
    }
    return {"Overall": mean(list(rows.values())), **rows}
