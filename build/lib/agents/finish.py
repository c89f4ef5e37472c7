"""Reading a ``Finish`` call the way ToolBench's harness reads it (``rapidapi_wrapper._step``).

ToolBench parses the argument text with ``json.loads(text, strict=False)`` (raw control
characters inside strings are fine). When that fails it reads the text leniently:

- ``return_type`` is ``give_answer`` or ``give_up_and_restart`` when the text holds
  ``"return_type": "<that value>"`` (exactly one space after the colon), otherwise the text
  between ``"return_type": "`` and the first ``",``;
- ``final_answer`` is everything after ``"final_answer": "`` up to the end of the text.

Then, by what the arguments hold (outcome; ToolBench's observation text and status code):

- no ``return_type``: ``error``; ``{error:"must have "return_type""}`` (2);
- ``give_up_and_restart``: ``give_up``; ``{"response":"chose to give up and restart"}`` (4);
- ``give_answer`` without ``final_answer``: ``error``; ``{error:"must have "final_answer""}`` (2);
- ``give_answer`` with any ``final_answer``: ``answer``;
  ``{"response":"successfully giving the final answer."}`` (3);
- any other ``return_type``: ``error``; ``{error:""return_type" is not a valid choice"}`` (2).

An ``error`` is not the end of anything: the model gets the text as the call's result and the
search goes on. Two departures, both where ToolBench's harness crashes: JSON that is not an object
reads as having no ``return_type``; the final answer of a lenient read drops the closing ``"}``
that ToolBench leaves at its end. A ``final_answer`` that is not a string is kept as its JSON
text. Pure; imports ``agents.toolenv`` only.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Literal

from agents.toolenv import GIVE_ANSWER, GIVE_UP

__all__ = [
    "ANSWER_OBSERVATION",
    "GIVE_UP_OBSERVATION",
    "FinishReading",
    "read_finish",
]

FinishOutcome = Literal["answer", "give_up", "error"]

ANSWER_OBSERVATION = '{"response":"successfully giving the final answer."}'
GIVE_UP_OBSERVATION = '{"response":"chose to give up and restart"}'
NO_RETURN_TYPE = '{error:"must have "return_type""}'
NO_FINAL_ANSWER = '{error:"must have "final_answer""}'
BAD_RETURN_TYPE = '{error:""return_type" is not a valid choice"}'

_RETURN_TYPE_MARK = '"return_type": "'
_FINAL_ANSWER_MARK = '"final_answer": "'
_CLOSING = re.compile(r'"\s*\}\s*$')


@dataclass(frozen=True)
class FinishReading:
    """What a ``Finish`` call amounts to."""

    outcome: FinishOutcome
    return_type: str | None
    final_answer: str
    observation: str
    """The text ToolBench answers the call with (its status code in ``status``)."""
    status: int


def _lenient(text: str) -> dict[str, Any]:
    """ToolBench's reading of argument text that is not JSON."""
    data: dict[str, Any] = {}
    if _RETURN_TYPE_MARK in text:
        if f'{_RETURN_TYPE_MARK}{GIVE_ANSWER}"' in text:
            data["return_type"] = GIVE_ANSWER
        elif f'{_RETURN_TYPE_MARK}{GIVE_UP}"' in text:
            data["return_type"] = GIVE_UP
        else:
            start = text.find(_RETURN_TYPE_MARK) + len(_RETURN_TYPE_MARK)
            data["return_type"] = text[start : text.find('",')]
    if _FINAL_ANSWER_MARK in text:
        tail = text[text.find(_FINAL_ANSWER_MARK) + len(_FINAL_ANSWER_MARK) :]
        data["final_answer"] = _CLOSING.sub("", tail, count=1)
    return data


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def read_finish(arguments: str) -> FinishReading:
    """Read a ``Finish`` call's raw argument text (see the module docstring)."""
    try:
        parsed: Any = json.loads(arguments, strict=False)
    except (ValueError, RecursionError):
        parsed = _lenient(arguments)
    data = parsed if isinstance(parsed, dict) else {}
    answer = _text(data.get("final_answer"))
    if "return_type" not in data:
        return FinishReading("error", None, answer, NO_RETURN_TYPE, 2)
    return_type = data["return_type"]
    shown = return_type if isinstance(return_type, str) else _text(return_type)
    if return_type == GIVE_UP:
        return FinishReading("give_up", GIVE_UP, answer, GIVE_UP_OBSERVATION, 4)
    if return_type == GIVE_ANSWER:
        if "final_answer" not in data:
            return FinishReading("error", GIVE_ANSWER, "", NO_FINAL_ANSWER, 2)
        return FinishReading("answer", GIVE_ANSWER, answer, ANSWER_OBSERVATION, 3)
    return FinishReading("error", shown, answer, BAD_RETURN_TYPE, 2)
