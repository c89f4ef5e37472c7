"""UltraTool's argument accuracy, tool selection and tool-usage awareness.

UltraTool (Huang et al. 2024, "Planning, Creation, Usage"; JoeYing1019/UltraTool,
``evaluation/utils.py``). A sample is a prediction (a list of step records) and its reference
(a list of ``{"step", "tool", "param"}`` records); steps pair by **label**: the text of ``step``
up to its first space (``"1.2 Use the file tool"`` → ``"1.2"``), the first predicted record with
the reference's label wins, and the tool plays no part in the pairing.

**Argument accuracy** (``cal_param_res``), per reference step: no predicted record with its label
scores 0; else, unless the predicted ``param`` is an object (then 0), per reference key: the
first predicted key equal to it after ``\\_`` became ``_`` (in keys and in string values) gives
``1 - normalised Levenshtein(str(gold), str(pred))``, or, for an empty reference value (length
0), 1 for an empty prediction and 0 otherwise; a key the prediction lacks scores 0; the step's
score is the mean over its keys (0 without keys). A sample with no reference steps counts one
step scoring 0. The figure is the mean over **all reference steps of all samples** (the
per-sample average UltraTool also computes is unused), rounded to 4 places. Values are text by
Python's ``str()``: ``True``, ``5.0``, ``['a', 'b']``, ``{'k': 1}``.

Where UltraTool's code raises (``len()`` of a number, boolean or ``None`` among the values) it has
no value; here such a value counts as not empty (so the Levenshtein branch scores it). A step
label or reference parameters of the wrong type raise ``NoReferenceValue``.

**Tool selection** (``cal_acc_for_select``): per reference step, the ``tool`` of the predicted
record with its label (``\\_`` → ``_``), else ``"no_good"``; list accuracy = samples whose tool
list equals the reference's (Python's ``==`` of the lists: ``5`` is not ``"5"``), element accuracy
= equal tools over all reference steps as scikit-learn's ``accuracy_score`` compares them: each
side's labels made one numpy array, so when a side holds any text every label of that side is
text (``5`` equals ``"5"``), and a side of text against a side of numbers has no equal element
(UltraTool's pinned numpy 1.24 and scikit-learn 1.2.2: ``label_array``).

**Tool-usage awareness** (``cal_acc_for_aware``): the same pairing over ``int(tool)`` flags
(1: the step needs a tool); a reference step without a readable predicted flag counts as the
wrong flag. Both accuracies rounded to 4 places.

Pure; the edit distance is rapidfuzz's (``distance / max(len)``, as ``textdistance``'s).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from rapidfuzz.distance import Levenshtein

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.rounding import np_mean

__all__ = [
    "NO_GOOD",
    "Accuracy",
    "aware_lists",
    "label_array",
    "list_accuracy",
    "param_scores",
    "param_accuracy",
    "select_lists",
    "unescape",
]

NO_GOOD = "no_good"


def unescape(value: Any) -> Any:
    """``\\_`` → ``_`` in a string (UltraTool's repair of escaped underscores)."""
    return value.replace("\\_", "_") if isinstance(value, str) and "\\_" in value else value


def _has_length(value: Any) -> bool:
    try:
        len(value)
    except TypeError:
        return False
    return True


def _empty(value: Any) -> bool:
    """``len(value) == 0``; a value without a length counts as not empty (module doc)."""
    return _has_length(value) and len(value) == 0


def _value_score(gold: Any, pred: Any) -> float:
    if _empty(gold):
        return 1.0 if _empty(pred) else 0.0
    return 1.0 - float(Levenshtein.normalized_distance(str(gold), str(pred)))


def _same_label(pred_step: Any, gold_step: Any) -> bool:
    """UltraTool's ``p.split(' ')[0] == g.split(' ')[0]`` (raises as it does on non-text)."""
    return bool(pred_step.split(" ")[0] == gold_step.split(" ")[0])


def _first_record(pred: Any, gold_step: Any) -> Mapping[str, Any] | None:
    try:
        records = iter(pred)
    except TypeError as e:
        raise NoReferenceValue("UltraTool iterates a prediction that is no list") from e
    for p in records:
        if p is Ellipsis or type(p) is not dict or not p or "step" not in p or "param" not in p:
            continue
        if not isinstance(p["step"], str):
            continue
        try:
            same = _same_label(p["step"], gold_step)
        except AttributeError as e:
            raise NoReferenceValue("UltraTool splits a reference label that is no text") from e
        if same:
            return p
    return None


def _step_score(gold_params: Any, pred_params: Any) -> float:
    if not isinstance(gold_params, dict):
        raise NoReferenceValue("UltraTool reads reference parameters that are no object")
    scores: list[float] = []
    for g_key, g_value in gold_params.items():
        if not isinstance(pred_params, dict):
            continue
        for p_key, p_value in pred_params.items():
            if unescape(p_key) == g_key:
                scores.append(_value_score(g_value, unescape(p_value)))
                break
        else:
            scores.append(0.0)
    return np_mean(scores) if scores else 0.0


def param_scores(pred: Any, golden: Sequence[Mapping[str, Any]]) -> list[float]:
    """The per-step scores of one sample (``[0.0]`` for a sample without reference steps)."""
    if isinstance(pred, list) and pred and isinstance(pred[0], list):
        pred = pred[0]
    out: list[float] = []
    for g in golden:
        record = _first_record(pred, g["step"])
        out.append(0.0 if record is None else _step_score(g["param"], record["param"]))
    return out or [0.0]


def param_accuracy(samples: Iterable[tuple[Any, Sequence[Mapping[str, Any]]]]) -> float:
    """``cal_param_res``'s figure before rounding: the mean over every sample's step scores."""
    return np_mean([s for pred, golden in samples for s in param_scores(pred, golden)])


def select_lists(pred: Any, golden: Sequence[Mapping[str, Any]]) -> tuple[list[Any], list[Any]]:
    """``(predicted tools, reference tools)`` of one sample, paired as ``cal_acc_for_select``."""
    if isinstance(pred, tuple):
        pred = pred[0]
    if isinstance(pred, list) and len(pred) == 1 and isinstance(pred[0], list):
        pred = pred[0]
    chosen: list[Any] = []
    wanted: list[Any] = []
    for g in golden:
        wanted.append(g["tool"])
        chosen.append(_selected_tool(pred, g["step"]))
    return chosen, wanted


def _selected_tool(pred: Any, gold_step: Any) -> Any:
    try:
        records = iter(pred)
    except TypeError as e:
        raise NoReferenceValue("UltraTool iterates a prediction that is no list") from e
    for p in records:
        try:
            if not _same_label(p["step"], gold_step):
                continue
            tool = p["tool"]
            if "\\_" in str(tool):
                tool = tool.replace("\\_", "_")
                p["tool"] = tool  # UltraTool writes the repair back into the record
            return tool
        except Exception:  # noqa: BLE001 - UltraTool skips a record that fails in any way
            continue
    return NO_GOOD


def aware_lists(pred: Any, golden: Sequence[Mapping[str, Any]]) -> tuple[list[int], list[int]]:
    """``(predicted flags, reference flags)`` of one sample, as ``cal_acc_for_aware`` pairs them."""
    chosen: list[int] = []
    wanted: list[int] = []
    for g in golden:
        try:
            flag = int(g["tool"])
        except (TypeError, ValueError) as e:
            raise NoReferenceValue(f"UltraTool reads a reference flag as int: {e}") from e
        wanted.append(flag)
        chosen.append(_aware_flag(pred, g["step"], flag))
    return chosen, wanted


def _aware_flag(pred: Any, gold_step: Any, gold_flag: int) -> int:
    if type(pred) is list:
        for p in pred:
            try:
                if _same_label(p["step"], gold_step):
                    return int(p["tool"])
            except Exception:  # noqa: BLE001 - UltraTool skips a record that fails in any way
                continue
    return 0 if gold_flag == 1 else 1


@dataclass(frozen=True)
class Accuracy:
    list_accuracy: float
    element_accuracy: float
    samples: int
    elements: int


def list_accuracy(pairs: Sequence[tuple[Sequence[Any], Sequence[Any]]]) -> Accuracy:
    """Samples whose lists are equal, and equal elements over all elements (unrounded).

    UltraTool takes the element accuracy from scikit-learn's ``accuracy_score``, which raises
    on no elements and on labels that are null, lists or objects: ``NoReferenceValue`` there."""
    if not pairs:
        raise NoReferenceValue("UltraTool divides by the number of samples: there are none")
    whole = sum(1 for p, g in pairs if list(p) == list(g)) / len(pairs)
    flat = [(p, g) for ps, gs in pairs for p, g in zip(ps, gs, strict=True)]
    if not flat:
        raise NoReferenceValue("scikit-learn's accuracy_score raises on no elements")
    if any(v is None or isinstance(v, (list, tuple, dict, set)) for pair in flat for v in pair):
        raise NoReferenceValue("scikit-learn's accuracy_score raises on null or sequence labels")
    chosen, wanted = label_array([p for p, _ in flat]), label_array([g for _, g in flat])
    if chosen.kind != wanted.kind:  # numpy 1.24 cannot compare text with numbers: all False
        return Accuracy(whole, 0.0, len(pairs), len(flat))
    element = sum(1 for p, g in zip(chosen.values, wanted.values, strict=True) if p == g)
    return Accuracy(whole, element / len(flat), len(pairs), len(flat))


@dataclass(frozen=True)
class LabelArray:
    kind: str
    """``text`` or ``number``."""
    values: list[Any]


def label_array(labels: Sequence[Any]) -> LabelArray:
    """A list of labels as scikit-learn compares them: made one numpy array (``np.asarray``),
    where one text label makes every label text (``5`` -> ``"5"``, ``5.0`` -> ``"5.0"``,
    ``True`` -> ``"True"``, as Python's ``str`` writes them) and labels that are all numbers
    compare as numbers (``True == 1 == 1.0``)."""
    if any(isinstance(v, str) for v in labels):
        return LabelArray("text", [v if isinstance(v, str) else str(v) for v in labels])
    return LabelArray("number", list(labels))
