"""The consoles the commands print tables with: rich, but quiet when stdout's reader leaves.

rich answers a closed stdout (``sandbox eval RUN | head -1``) itself, by exiting with status 1
(``Console.on_broken_pipe``). The commands' consoles raise ``BrokenPipeError`` instead, which
``sandbox.cli`` turns into exit 141 as it does for any other write: one rule for every command.
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from rich.console import Console

__all__ = ["PipeConsole", "output_console", "stdout_console"]


class PipeConsole(Console):
    """A rich ``Console`` that lets a broken pipe propagate (see the module docstring)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def stdout_console(**options: Any) -> PipeConsole:
    """A console on stdout (rich's default width when piped)."""
    return PipeConsole(file=sys.stdout, **options)


def output_console(stream: TextIO) -> PipeConsole:
    """A console for tables: the terminal's width, or a wide fixed one when piped (CI, logs)."""
    console = PipeConsole(file=stream, highlight=False)
    if not console.is_terminal:
        console = PipeConsole(file=stream, highlight=False, width=140)
    return console
