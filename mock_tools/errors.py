"""Exceptions of the mock_tools package.

MockToolsError
└── SuiteError     a suite folder cannot be loaded; the message names the file and field
Imports nothing.
"""

from __future__ import annotations


class MockToolsError(Exception):
    """Base class; the message says what is wrong and where."""


class SuiteError(MockToolsError):
    def __init__(self, message: str, *, file: str | None = None, field: str | None = None) -> None:
        where = file or ""
        if field:
            where = f"{where}: {field}" if where else field
        super().__init__(f"{where}: {message}" if where else message)
        self.file = file
        self.field = field
