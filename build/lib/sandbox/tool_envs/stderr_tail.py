"""A child process's stderr, passed through to ours with its last lines kept, so that a stdio MCP
server that fails to start can be reported with what it said (``mcp_client``).

``StderrTail(sink)`` is a pipe: give ``writer`` to the child as its stderr, call
``close_writer()`` once the child is started (the child keeps its own end), and ``last_line()``
after it failed. A daemon thread copies every byte to ``sink`` (our stderr) as it comes and keeps
the last ``KEEP`` bytes. Imports nothing of the project.
"""

from __future__ import annotations

import contextlib
import os
import threading
from typing import Any, TextIO

__all__ = ["KEEP", "StderrTail"]

KEEP = 8192
"""Bytes of the child's stderr kept for the error message."""

_SHOWN = 300


class StderrTail:
    """A pipe whose reading end is copied to ``sink`` and remembered (the last ``KEEP`` bytes)."""

    def __init__(self, sink: Any) -> None:
        read, write = os.pipe()
        self.writer: TextIO = open(write, "w")  # noqa: SIM115 - handed to the child, closed later
        self._read = read
        self._sink = sink
        self._kept = bytearray()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._pump, name="stderr-tail", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while chunk := os.read(self._read, 65536):
                self._forward(chunk)
                with self._lock:
                    self._kept += chunk
                    del self._kept[:-KEEP]
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                os.close(self._read)

    def _forward(self, chunk: bytes) -> None:
        try:
            os.write(self._sink.fileno(), chunk)
        except (AttributeError, OSError, ValueError):
            with contextlib.suppress(Exception):
                self._sink.write(chunk.decode("utf-8", "replace"))

    def close_writer(self) -> None:
        """Close our copy of the writing end (the child has its own): the copy ends when the
        child and its children close theirs."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def last_line(self, wait: float = 2.0) -> str:
        """The child's last non-blank line of stderr (shortened), waiting up to ``wait`` s for
        what it wrote before it exited; "" when it wrote nothing."""
        self.close_writer()
        self._thread.join(wait)
        with self._lock:
            text = self._kept.decode("utf-8", "replace")
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        if not lines:
            return ""
        last = lines[-1]
        return last if len(last) <= _SHOWN else last[: _SHOWN - 3] + "..."
