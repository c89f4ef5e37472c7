"""How UltraTool reads its prediction files: the repairs its collectors try, in their order.

UltraTool's ``evaluation/utils.py`` reads a model's reply (``collect_pred_golden_for_aware`` for
tool selection and awareness, ``collect_pred_golden_for_param`` for argument accuracy) by
rewriting the text (``TIDY``: fences, ``true``/``false``/``null``, ``\\_``, full-width commas,
``} }``...), cutting it to its list, and then trying one repair after another (a missing ``}``,
a missing ``"}``, a cut-off last step, single quotes...) until Python's ``eval`` of it succeeds;
a reply nothing repairs is ``[]`` and counted as bad JSON. ``eval`` is ``python_expr.evaluate``
here (no code runs; names and calls are refused).

A file is read record by record (JSON lines). A record of a GPT model is
``{"data": {"reference"}, "init output"}``, any other ``{"question": {"reference"},
"total output": {"init output": [reply]}}``; UltraTool chooses by the model's name, here by which
keys the record has. Kept quirks of its loop: a reply that is a list of strings is read from its
first string; a reply that is already a list of records is taken as it is **but judged by the
previous record's parse outcome** (UltraTool's ``successful_parse`` is not reset for it: after
a failed record such a reply is dropped as bad JSON); a reply of any other type repeats the
previous record's prediction; a repair that builds on the previous candidate text reuses the last
one of an earlier record when this record has none. A first record whose reply is a list of
records has no previous outcome (UltraTool raises a NameError): ``NoReferenceValue``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.eval.benchmarks import NoReferenceValue
from sandbox.eval.benchmarks.python_expr import evaluate
from sandbox.eval.benchmarks.record_limits import LeftOut, each, too_large

__all__ = ["Collected", "Collector", "collect", "tidy"]

Kind = Literal["aware", "param"]
_LAST_LIST = re.compile(r"(\[\{.*?\}\])")

_SPACED_BRACES = [("}" + " " * n + "}", "}}") for n in range(1, 13)]
_COMMON_HEAD = [
    ("输出：", ""),
    ("\n", ""),
    ("\\_", "_"),
    ("true", "True"),
    ("false", "False"),
    ("null", '"null"'),
    ("None", '"None"'),
    ("})", "}"),
    ("，", ","),
    ('}, "step', '}, {"step'),
    ("# ...", ""),
]
TIDY: dict[Kind, list[tuple[str, str]]] = {
    "aware": [*_COMMON_HEAD, *_SPACED_BRACES],
    "param": [*_COMMON_HEAD, ("}{", "}, {"), *_SPACED_BRACES],
}
"""The rewrites after dropping ``json`` and surrounding backticks, in UltraTool's order."""

_QUOTES = [
    ("{'", '{"'),
    ("'}", '"}'),
    ("', '", '", "'),
    ("\", '", '", "'),
    ("', \"", '", "'),
    ("': '", '": "'),
    ("': \"", '": "'),
    ("\": '", '": "'),
    ("': {", '": {'),
    ("['", "["),
    ("']", "]"),
    (", '", ', "'),
    ("'),", ')",'),
]
QUOTES_AWARE = [*_QUOTES, ('""None""', '"None"'), ('"{step', '{"step'), ("')}", ')"}')]
QUOTES_PARAM = [*_QUOTES, ("': ", '": '), ("', {", '", {'), ("')}", ')"}'), ('}}," {', "}}, {")]
QUOTES_PARAM_LAST = [*QUOTES_PARAM, ('""None""', '"None"')]


def _rewrite(text: str, pairs: list[tuple[str, str]]) -> str:
    for old, new in pairs:
        text = text.replace(old, new)
    return text


def tidy(reply: str, kind: Kind) -> str:
    """The general rewrite and the cut to the list (before the ``eval`` attempts)."""
    text = _rewrite(reply.replace("json", "").strip("`"), TIDY[kind])
    if not text.startswith("["):
        at = text.find("[")
        if at != -1:
            text = text[at:]
    if not text.endswith("]"):
        at = text.rfind("]")
        if at != -1:
            text = text[: at + 1]
        elif "[" in text:
            mark, keep = ("},", 1) if kind == "aware" else ("}},", 2)
            cut = text.rfind(mark)
            text = text[: cut + keep] + "]" if cut != -1 else text + "]"
    return text


@dataclass
class Collected:
    """What a collector read: per record, the prediction and the reference."""

    preds: list[Any] = field(default_factory=list)
    goldens: list[Any] = field(default_factory=list)
    bad: int = 0
    """Records whose reply nothing repaired (UltraTool's "number of bad json format")."""


class Collector:
    """UltraTool's collector loop, with the state it carries from record to record."""

    def __init__(self, kind: Kind) -> None:
        self.kind = kind
        self.ok: bool | None = None
        self.pred: Any = None
        self.candidate: str | None = None
        self.out = Collected()

    def add(self, record: Mapping[str, Any]) -> None:
        gpt = "data" in record
        golden = record["data"]["reference"] if gpt else record["question"]["reference"]
        reply = record["init output"] if gpt else record["total output"]["init output"][0]
        too_large(reply, "a reply")
        if isinstance(reply, list):
            if not reply:
                raise NoReferenceValue("UltraTool reads the first item of an empty reply list")
            if not isinstance(reply[0], str):
                self.pred = reply
            else:
                reply = reply[0]
        if isinstance(reply, str):
            self.ok = False
            text = tidy(reply, self.kind)
            if not gpt and text.count("]") > 1:
                found = _LAST_LIST.findall(text)
                if found:
                    text = found[-1]
                else:
                    at = text.find("]")
                    if at != -1:
                        text = text[: at + 1]
            self._try(lambda: text, keep=False)
            if self.kind == "aware":
                self._repair_aware(text)
            else:
                self._repair_param(text)
        if self.ok is None:
            raise NoReferenceValue("UltraTool's first record has no parse outcome (NameError)")
        if not self.ok:
            self.out.bad += 1
            self.pred = []
        self.out.preds.append(self.pred)
        self.out.goldens.append(golden)

    def state(self) -> tuple[Any, ...]:
        """What ``add`` changes, to put back after a record that failed half way."""
        out = self.out
        return (self.ok, self.pred, self.candidate, len(out.preds), len(out.goldens), out.bad)

    def restore(self, state: tuple[Any, ...]) -> None:
        self.ok, self.pred, self.candidate, preds, goldens, self.out.bad = state
        del self.out.preds[preds:], self.out.goldens[goldens:]

    # -- one attempt: build a candidate (it may raise), eval it ---------------------------------

    def _attempt(self, build: Any, keep: bool = True) -> bool:
        """Unless already read: ``build()`` a candidate and eval it. Raises what either raises
        (the caller decides what UltraTool does then); True when it was read."""
        if self.ok:
            return True
        candidate = build()
        if keep:
            self.candidate = candidate
        value = evaluate(candidate)
        self.pred, self.ok = value, True
        return True

    def _try(self, build: Any, keep: bool = True) -> bool:
        try:
            return self._attempt(build, keep)
        except Exception:  # noqa: BLE001 - UltraTool moves on after any failure
            return False

    def _repair_aware(self, text: str) -> None:
        if not self._try(lambda: text[:-1] + "}" + text[-1]):
            self._try(lambda: text[:-1] + '"}' + self._previous()[-1])
        self._try(lambda: self._cut_last_step(text, "},", 1))
        # UltraTool also retries when the text is "format", which only its eval (of a builtin
        # name) reads; names are refused here, so "not read yet" is the whole condition
        self._try(lambda: _rewrite(text, QUOTES_AWARE))

    def _repair_param(self, text: str) -> None:
        if not self._try(lambda: text[:-1] + "}" + text[-1]):
            self._try(lambda: self._previous()[:-1] + "}" + self._previous()[-1])
        self._try(lambda: text.replace('"}, {"step', '"}}, {"step'))
        self._try(lambda: text[:-1] + '"}' + text[-1])
        self._try(lambda: text[:-1] + "]}}" + text[-1])
        if not self._try(lambda: text[:-2] + text[-1]):
            self._try(lambda: self._previous()[:-2] + self._previous()[-1])
        self._try(lambda: text.replace("}}}", "}}"))
        cut = text.rfind("}},")
        cuttable = not self.ok and cut != -1 and "[" in text
        if cuttable and not self._try(lambda: text[: cut + 2] + "]"):
            self.candidate = _rewrite(text, QUOTES_PARAM)
        if not self._try(lambda: _rewrite(text, QUOTES_PARAM_LAST)):
            base = self._previous()
            self._try(lambda: base.replace("}}}", "}}"), keep=False)
            self._try(lambda: base[:-1] + "]}}" + base[-1], keep=False)

    def _previous(self) -> str:
        if self.candidate is None:
            raise NameError("pred_text_")
        return self.candidate

    @staticmethod
    def _cut_last_step(text: str, mark: str, keep: int) -> str:
        cut = text.rfind(mark)
        if cut == -1 or "[" not in text:
            raise ValueError("no complete step to keep")
        return text[: cut + keep] + "]"


def collect(
    records: Iterable[Mapping[str, Any]], kind: Kind, left_out: LeftOut | None = None
) -> Collected:
    """Every record of a prediction file read as UltraTool's collector reads it. With
    ``left_out``, a record on which UltraTool's code raises (or that runs over a limit of
    ``record_limits``) is left out and counted there, the collector's state as it was before
    it; without, it raises."""
    collector = Collector(kind)
    for record in records:
        if left_out is None:
            collector.add(record)
            continue
        saved = collector.state()
        if not each([record], collector.add, left_out, raises="UltraTool's code raises"):
            collector.restore(saved)
    return collector.out
