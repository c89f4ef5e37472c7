"""Exceptions of the mock_tools package.

MockToolsError
└── SuiteError     a suite folder cannot be loaded; the message names the file and field
Imports nothing.
"""

from __future__ import annotations

import re


class MockToolsError(Exception):
    """Base class; the message says what is wrong and where."""


class SuiteError(MockToolsError):
    """A suite that cannot be used; the message is one line (a parser's multi-line message is
    joined), naming the file and field."""

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None) -> None:
        message = re.sub(r"\s*\n\s*", " ", message.strip())
        where = file or ""
        if field:
            where = f"{where}: {field}" if where else field
        super().__init__(f"{where}: {message}" if where else message)
        self.file = file
        self.field = field


def limit_message(e: BaseException) -> str:
    """What a parser's resource error (deep nesting, a number too long to read) means to the
    person who wrote the input, without Python's hints about interpreter settings."""
    if isinstance(e, RecursionError):
        return "nested too deeply"
    return str(e).split("; use sys.set_int_max_str_digits", 1)[0]
