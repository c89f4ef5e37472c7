"""``sendable``: a request's messages as UTF-8 can carry them.

A model may answer with text holding an unpaired surrogate (JSON's ``"\\udcff"`` decodes to one);
the trajectory keeps it (escaped, ``Trajectory.to_json_line``), but the next request, which
carries that text back in the history, could not be encoded at all. In what is sent, each
unpaired surrogate becomes U+FFFD, the replacement character.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["sendable"]

_SURROGATE = re.compile("[\ud800-\udfff]")


def sendable(value: Any) -> Any:
    """``value`` (messages: lists, dicts, text) with unpaired surrogates replaced."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [sendable(v) for v in value]
    if isinstance(value, dict):
        return {k: sendable(v) for k, v in value.items()}
    return value
