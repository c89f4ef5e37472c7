"""ToolBench observation strings <-> recorded responses, and how two observations are compared.

A ToolBench observation is ``json.dumps({"error": error, "response": response})`` (Python's default
separators and ``ensure_ascii=True``). ToolBench cuts any observation longer than 1024 characters
and appends ``...``, so such a text is no longer JSON: only its visible part survives.

Import: ``response_from_observation`` turns the text into ``Response(ok = error == "",
body = response, error = error)``; ``response`` keeps its original type (usually a string holding a
Python repr or JSON, never re-parsed), so the mock server's ``/virtual`` answer
``{"error", "response"}`` renders back to the same text. For a cut observation the body is the
visible part of the response: of the string when the response was a string, else the visible
JSON text of the value (a cut object is still a successful call, with its cut text as body).

Comparison (``same_observation``): texts are equal, or both decode to the same ``(error,
response)``; when either side was cut (by ToolBench or by our own observation limit), the cut
response must be a prefix of the other. This ignores only what cannot be known (the cut-off tail)
and rendering details that carry no content (``ensure_ascii``, separators).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from mock_tools.models import Response
from sandbox.store.input_files import json_text

__all__ = [
    "TOOLBENCH_CUT_MARK",
    "TOOLBENCH_OBSERVATION_LIMIT",
    "ParsedObservation",
    "parse_observation",
    "render_observation",
    "response_from_observation",
    "same_observation",
]

TOOLBENCH_OBSERVATION_LIMIT = 1024
TOOLBENCH_CUT_MARK = "..."
_HEAD = re.compile(r'^\{\s*"error"\s*:\s*("(?:[^"\\]|\\.)*")\s*,\s*"response"\s*:\s*')
_MAX_ESCAPE = 6  # the longest JSON escape (\uXXXX) a cut can split


@dataclass(frozen=True)
class ParsedObservation:
    error: str
    response: Any
    truncated: bool = False


def render_observation(error: str, response: Any) -> str:
    """The observation text exactly as ToolBench writes it."""
    return json.dumps({"error": error, "response": response})


def parse_observation(text: str) -> ParsedObservation | None:
    """Decode an observation text, whole or cut; None when it is neither."""
    try:
        data = json_text(text)
    except json.JSONDecodeError:
        return _parse_cut(text)
    if isinstance(data, dict) and "response" in data:
        error = data.get("error", "")
        return ParsedObservation(
            error=error if isinstance(error, str) else str(error), response=data["response"]
        )
    return None


def _parse_cut(text: str) -> ParsedObservation | None:
    m = _HEAD.match(text)
    if m is None:
        return None
    error = json.loads(m.group(1))
    rest = text[m.end() :]
    marked = rest.endswith(TOOLBENCH_CUT_MARK)
    if marked:
        rest = rest[: -len(TOOLBENCH_CUT_MARK)]
    if not rest.startswith('"'):  # a cut object, list or number: its visible JSON text
        return ParsedObservation(error, rest, truncated=True) if rest and marked else None
    rest = rest[1:]
    for drop in range(min(_MAX_ESCAPE, len(rest)) + 1):
        try:
            visible = json.loads('"' + rest[: len(rest) - drop] + '"')
        except json.JSONDecodeError:
            continue
        return ParsedObservation(error=error, response=visible, truncated=True)
    return None


def response_from_observation(text: str) -> tuple[Response, bool] | None:
    """``(Response, was_cut)`` for an observation text, or None when it is not one."""
    parsed = parse_observation(text)
    if parsed is None:
        return None
    response = Response(ok=parsed.error == "", body=parsed.response, error=parsed.error)
    return response, parsed.truncated


def same_observation(original: str, replayed: str) -> bool:
    """Whether a replayed observation reproduces an original one (see the module doc)."""
    if original == replayed:
        return True
    a, b = parse_observation(original), parse_observation(replayed)
    if a is None or b is None or a.error != b.error:
        return False
    if not a.truncated and not b.truncated:
        return a.response == b.response
    if not isinstance(a.response, str) or not isinstance(b.response, str):
        return False
    if a.truncated and b.truncated:
        return a.response.startswith(b.response) or b.response.startswith(a.response)
    if a.truncated:
        return b.response.startswith(a.response)
    return a.response.startswith(b.response)
