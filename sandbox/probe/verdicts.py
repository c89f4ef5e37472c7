"""Gold review verdicts: what a tool response was (A–E), read by rule from the response itself.

``verdict_of`` classifies a recorded ``Response``; ``verdict_of_observation`` applies the same rule
to an observation as a model sees it. The probe's review questions are scored against it, and the
offline oracle answers with it. Pure; imports nothing of the project but ``mock_tools`` models.
"""

from __future__ import annotations

import json
import re
from typing import Any

from mock_tools.models import Response

__all__ = ["VERDICTS", "verdict_of", "verdict_of_observation"]

VERDICTS = {
    "A": "Success: the call worked and returned what was asked for",
    "B": "Internal error: the tool failed on its side (server error, timeout, rate limit)",
    "C": "Input error: the call's arguments were wrong or incomplete",
    "D": "Irrelevant response: the tool answered something unrelated",
    "E": "Unable to accomplish: the call worked but the tool has nothing for this request",
}

_INPUT_ERROR = re.compile(
    r"invalid|missing|required|must be|must have|not a valid|bad request|unknown (param|arg|field)"
    r"|unexpected (param|arg|field)|expected|format|out of range|not found|\b(400|404|422)\b",
    re.IGNORECASE,
)
_STATUS = re.compile(r"^\s*(?:HTTP\s*)?([1-5]\d\d)\b", re.IGNORECASE)


def _classify(ok: bool, error: str, body: Any) -> str:
    if not ok or error:
        status = _STATUS.match(error or "")
        if status:
            code = int(status.group(1))
            return "B" if code == 429 or code >= 500 else "C" if code >= 400 else "B"
        return "C" if _INPUT_ERROR.search(error or "") else "B"
    return "E" if body in (None, "", [], {}) else "A"


def verdict_of(response: Response) -> str:
    """Gold verdict of a recorded response.

    ok with a non-empty body: A; ok but empty: E; an error: by the HTTP status it starts with
    when there is one (4xx but 429: C, input error; 429 and 5xx: B, internal error), else C when
    the text names bad input (invalid, missing, required, expected, not found...), else B.
    D (irrelevant response) needs judgement; the rule never gives it.
    """
    return _classify(response.ok, response.error, response.body)


def verdict_of_observation(content: str) -> str:
    """The same rule applied to an observation as a model sees it (``{"error", "response"}``)."""
    try:
        data = json.loads(content)
    except json.JSONDecodeError:
        return "B"
    if not isinstance(data, dict):
        return "A"
    error = str(data.get("error") or "")
    return _classify(not error, error, data.get("response"))
