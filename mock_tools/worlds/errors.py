"""The worlds' exceptions.

- ``ToolError``: raised by a world tool for an answer that is an error ("no such order"): the
  agent sees its message as the call's error, and the state stays as it was.
- ``WorldDefinitionError`` (a ``SuiteError``): a world that cannot be used (it does not load, a
  tool without types or docstring, code that breaks the determinism rules, a gold action that
  fails); the message names the file and line.
- ``CallTimedOut``: what the call limit raises inside world code that runs past it.
Imports ``mock_tools.errors`` only.
"""

from __future__ import annotations

from mock_tools.errors import SuiteError

__all__ = ["CallTimedOut", "ToolError", "WorldDefinitionError"]


class ToolError(Exception):
    """A world tool's error answer: its message is what the agent sees."""


class WorldDefinitionError(SuiteError):
    """A world that cannot be used; ``where`` is ``file:line`` (or a file, or a name)."""

    def __init__(self, message: str, where: str | None = None) -> None:
        super().__init__(message, file=where)


class CallTimedOut(BaseException):
    """Raised inside world code that ran past the per-call limit (a ``BaseException``, so world
    code's own ``except Exception`` does not swallow it)."""
