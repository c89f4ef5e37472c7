"""ToolBench's ``Finish`` arguments, as its answer files store them (a JSON string).

``final_answer`` in ``answer_generation`` and the ``Finish`` message of converted answers hold the
raw argument text of the model's ``Finish`` call. One reader for both importers. Pure; imports
``agents.toolenv`` only.
"""

from __future__ import annotations

import json
from typing import Any

from agents.toolenv import GIVE_ANSWER
from sandbox.store.input_files import json_text

__all__ = ["finish_answer"]


def finish_answer(text: Any) -> str | None:
    """The answer given by a ``Finish`` argument string.

    Its ``final_answer`` when it is a JSON object whose ``return_type`` (if any) is
    ``give_answer``; the text itself when it is not a JSON object (some models wrote the answer
    as plain text); None for an empty text, a give-up, or an object without a text answer.
    """
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        args = json_text(text)
    except json.JSONDecodeError:
        return text
    if not isinstance(args, dict):
        return text
    if args.get("return_type", GIVE_ANSWER) != GIVE_ANSWER:
        return None
    answer = args.get("final_answer")
    return answer if isinstance(answer, str) else None
