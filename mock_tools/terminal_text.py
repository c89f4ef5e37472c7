"""``shown``: text from a suite or a user's file, made safe to print as a message on a terminal.

A tool name, a file's text or a value quoted in an error can hold characters that break a line
(``\\r``, ``\\x0b``, ``\\x85``, ``\\u2028``...) or drive a terminal (``\\x1b``): printed raw, one
error becomes several lines, or rewrites what the screen shows. ``shown`` writes each such
character as its Python escape (``\\x85``) and keeps everything printable, tabs, and the ``\\n``
a message puts between its own lines on purpose.
"""

from __future__ import annotations

__all__ = ["shown"]

_KEPT = frozenset("\n\t")


def shown(text: str) -> str:
    """``text`` with every character that is neither printable nor a tab or newline escaped."""
    if text.isprintable():
        return text
    return "".join(c if c in _KEPT or c.isprintable() else _escape(c) for c in text)


def _escape(c: str) -> str:
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
