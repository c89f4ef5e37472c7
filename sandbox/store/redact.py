"""Keeping secrets out of what is written or printed: one rule for text and one for data.

A model named ``openai:m@http://user:secret@host/v1?api_key=...`` works, but a run folder, a
trajectory, a report or an error message shows ``openai:m@http://***@host/v1?api_key=***``.
Keys given through the environment never reach a record at all. What is redacted:

- in text (``redact``): the user info of a URL of any scheme (``http://u:pw@``,
  ``ray://admin:pw@``); the value of a secret-named query parameter (``?token=T``), command-line
  option (``--api-key=K``, ``--api-key K``), assignment (``OPENAI_API_KEY=K node agent.js``,
  ``model.api_key=K``: a name in capitals, or one with a ``_``, ``.`` or ``-`` in it, so that
  prose's ``key=value`` stays) or JSON member (``"api_key": "K"``); the token after ``Bearer``;
- in data (``redact_data``, for option mappings and record headers): the whole value under a
  secret-named key (``{"api_key": ...}``, ``{"env": {"HF_TOKEN": ...}}``), and every other text
  through ``redact``.

A name is secret when one of its parts (split at ``-``, ``_``, ``.`` and lower-to-upper case
changes) ends with one of ``SECRET_WORDS``: ``api_key``, ``X-Api-Key``, ``apiKey``,
``HF_TOKEN``, ``auth_header``, ``passwd``; not ``max_tokens`` or ``keyword``. The rule is on
names, not values: a key pasted bare into a prompt or a positional argument is not found.
Imports nothing.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["REDACTED", "SECRET_WORDS", "holds_redacted", "redact", "redact_data", "secret_name"]

REDACTED = "***"
SECRET_WORDS = (
    "key",
    "token",
    "secret",
    "password",
    "passwd",
    "pwd",
    "auth",
    "authorization",
    "credential",
    "credentials",
    "signature",
    "sig",
    "cookie",
)
"""A name part ending with one of these names a secret (``apikey``, ``access_token``)."""

_PARTS = re.compile(r"[-_.\s]+|(?<=[a-z0-9])(?=[A-Z])")
_VALUE = r"(?:\"[^\"]*\"|'[^']*'|[^\s\"'&;#]+)"
_USERINFO = re.compile(r"(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*://)(?P<userinfo>[^/@\s]+)@")
_QUERY = re.compile(r"(?P<lead>[?&;](?P<name>[\w.-]+)=)(?P<value>[^&;#\s]*)")
_OPTION = re.compile(
    rf"(?P<lead>(?<![^\s\"'])--?(?P<name>[A-Za-z][\w.-]*)(?:=|\s+))(?P<value>{_VALUE})"
)
_ASSIGNMENT = re.compile(
    rf"(?P<lead>(?<![^\s;&|(\"'])(?P<name>[A-Z][A-Z0-9_]*|[A-Za-z]\w*[_.-][\w.-]*)=)"
    rf"(?P<value>{_VALUE})"
)
_MEMBER = re.compile(
    r"(?P<lead>\"(?P<name>[^\"\\]{1,100})\"\s*:\s*)(?P<value>\"(?:[^\"\\]|\\.)*\")"
)
_PLACEHOLDER = re.compile(r"(?:VALUE|KEY|TOKEN|SECRET|PASSWORD|\.\.\.|<[^>]*>)[,.;:)]?$")
"""A value that is a usage text's placeholder (``KEY=VALUE``, ``...``, ``<key>``), not a secret:
those words only (a key in capitals, ``SEKRIT``, is still one)."""
_BEARER = re.compile(r"(?P<lead>\bBearer\s+)(?P<value>[\w.~+/=-]+)")


def secret_name(name: str) -> bool:
    """Whether ``name`` names a secret (see the module docstring)."""
    return any(part.lower().endswith(SECRET_WORDS) for part in _PARTS.split(name) if part)


def _hide(match: re.Match[str]) -> str:
    value = match["value"]
    if value.startswith(("-", REDACTED)) or _PLACEHOLDER.match(value):
        return match[0]  # the next option, redacted already, or usage text's KEY=VALUE
    quote = value[0] if value[:1] in ("'", '"') else ""
    return f"{match['lead']}{quote}{REDACTED}{quote}"


def _hide_named(match: re.Match[str]) -> str:
    return _hide(match) if secret_name(match["name"]) else match[0]


def redact(text: str) -> str:
    """``text`` with the credentials the module docstring lists replaced by ``***``."""
    if "://" in text:
        text = _USERINFO.sub(lambda m: f"{m['scheme']}{REDACTED}@", text)
    if "=" in text:
        text = _QUERY.sub(_hide_named, text)
        text = _ASSIGNMENT.sub(_hide_named, text)
    if "-" in text:
        text = _OPTION.sub(_hide_named, text)
    if '"' in text:
        text = _MEMBER.sub(_hide_named, text)
    if "Bearer" in text:
        text = _BEARER.sub(_hide, text)
    return text


def redact_data(value: Any) -> Any:
    """``value`` (JSON-like data) with the value under every secret-named key replaced by
    ``***`` (None and empty values kept) and every other text through ``redact``."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {
            k: (REDACTED if v not in (None, "") else v)
            if isinstance(k, str) and secret_name(k)
            else redact_data(v)
            for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    return value


def holds_redacted(value: Any) -> bool:
    """Whether ``value`` (text or data) carries a ``***`` that a redaction left."""
    if isinstance(value, str):
        return REDACTED in value
    if isinstance(value, dict):
        return any(holds_redacted(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(holds_redacted(v) for v in value)
    return False
