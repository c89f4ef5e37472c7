"""Keeping secrets out of what is written or printed: credentials inside URLs.

A model named ``openai:m@http://user:secret@host/v1?api_key=...`` works, but a run folder, a
trajectory, a report or an error message shows ``openai:m@http://***@host/v1?api_key=***``.
Keys given through the environment never reach a record at all. Imports nothing.
"""

from __future__ import annotations

import re

__all__ = ["REDACTED", "redact"]

REDACTED = "***"
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")
_SECRET_PARAM = re.compile(
    r"(?P<name>[?&;](?:[\w.-]*(?:key|token|secret|password|passwd|pwd|auth|signature|sig)"
    r"[\w.-]*))=(?P<value>[^&;#\s]*)",
    re.IGNORECASE,
)


def redact(text: str) -> str:
    """``text`` with the user info of URLs and secret-looking query values replaced."""
    if "://" not in text and "=" not in text:
        return text
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    return _SECRET_PARAM.sub(lambda m: f"{m['name']}={REDACTED}", text)
