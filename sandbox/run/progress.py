"""Live progress of a run on stderr: a rich bar on a terminal, one plain line per episode otherwise.

Columns: episodes done / total, passed, failed, errors (infrastructure or harness errors, not
charged to the agent), model calls, tokens and retried model calls so far. Non-TTY output (CI,
pipes) gets no control codes, only lines such as
``[3/12] t-weather#0 answered solved (calls 4, tokens 812)``; an episode that ended in error says
why after its status (``error unsolved: agent_crashed; stderr: ModuleNotFoundError: No module
named 'x' (calls 0, tokens 0)``), the trajectory keeping the rest. Imports rich only.
"""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Any, TextIO

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

__all__ = ["RunProgress"]


class RunProgress:
    """Counts episodes as they finish and shows them; use as a context manager."""

    def __init__(self, total: int, *, title: str = "run", stream: TextIO | None = None) -> None:
        self.total = total
        self.done = 0
        self.passed = 0
        self.failed = 0
        self.errors = 0
        self.model_calls = 0
        self.tokens = 0
        self.retries = 0
        self.simulator_retries = 0
        self._stream = stream or sys.stderr
        self._console = Console(file=self._stream, stderr=stream is None)
        self._live = self._console.is_terminal and not self._console.is_dumb_terminal
        self._title = title
        self._progress: Progress | None = None
        self._task_id: TaskID | None = None

    def __enter__(self) -> RunProgress:
        if self._live:
            self._progress = Progress(
                TextColumn("[bold]{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("[green]passed {task.fields[passed]}"),
                TextColumn("[red]failed {task.fields[failed]}"),
                TextColumn("[yellow]errors {task.fields[errors]}"),
                TextColumn("model calls {task.fields[calls]}  tokens {task.fields[tokens]}"),
                TextColumn("[yellow]retries {task.fields[retries]}"),
                TimeElapsedColumn(),
                console=self._console,
                transient=False,
            )
            self._progress.start()
            self._task_id = self._progress.add_task(
                self._title, total=self.total, completed=self.done, **self._fields()
            )
        else:
            print(f"{self._title}: {self.total} episodes", file=self._stream, flush=True)
        return self

    def skip(self, n: int) -> None:
        """Episodes already finished (resume): counted as done, not shown one by one."""
        self.done += n

    def record(
        self,
        label: str,
        *,
        episode: str,
        status: str,
        error: bool,
        model_calls: int,
        tokens: int,
        retries: int = 0,
        simulator_retries: int = 0,
        note: str = "",
    ) -> None:
        """One finished episode: ``label`` solved/unsolved/unsure, ``error`` for infra errors;
        ``note`` (why an episode ended in error) is shown after its status, above the bar on a
        terminal."""
        self.done += 1
        if error:
            self.errors += 1
        elif label == "solved":
            self.passed += 1
        else:
            self.failed += 1
        self.model_calls += model_calls
        self.tokens += tokens
        self.retries += retries
        self.simulator_retries = simulator_retries
        said = f": {note}" if note else ""
        if self._progress is not None and self._task_id is not None:
            self._progress.update(self._task_id, completed=self.done, **self._fields())
            if note:
                self._progress.console.print(f"{episode} {status}{said}", markup=False)
        else:
            print(
                f"[{self.done}/{self.total}] {episode} "
                + ("infra error, not counted" if error else f"{status} {label}")
                + f"{said} (calls {model_calls}, tokens {tokens}"
                + (f", retries {retries})" if retries else ")"),
                file=self._stream,
                flush=True,
            )

    def _fields(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "failed": self.failed,
            "errors": self.errors,
            "calls": self.model_calls,
            "tokens": self.tokens,
            "retries": self.retries + self.simulator_retries,
        }

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
