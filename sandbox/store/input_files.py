"""Files that come from elsewhere, read bounded: one reader for every file a command is pointed at.

Another benchmark's prediction files (``rescore --teval/--ultratool/--tooleyes``), what the
importers read (ToolBench queries and answers, StableToolBench's cache, ToolEyes' data), and the
files of a run folder that the viewer, the leaderboard and ``view --export`` read are trusted
for nothing. Every one is read here:

- ``open_regular(path)``: the file opened without blocking and checked once open to be a
  regular file, so a FIFO (which would block the read, and with it the viewer's lock) or a
  device (``/dev/zero`` never ends) is refused unread, and nothing swapped in between is read;
- ``read_input(path, limit)``: its bytes, at most ``limit`` (``MAX_INPUT_BYTES``: 1 GiB);
- ``read_json(path)``: its one JSON document, read with Python's reader as the benchmarks' own
  scripts read them (``NaN`` included), nested at most ``MAX_JSON_DEPTH`` deep;
- ``json_lines(path)``: its JSON lines, each with its line number, each at most
  ``MAX_JSON_LINE_BYTES`` and ``MAX_JSON_DEPTH`` deep; blank lines skipped;
- ``json_text(text)``: JSON text found inside such a file (a ToolBench observation, a cache
  key, a Finish call's arguments), read as ``json.loads`` reads it, nesting too deep being a
  ``json.JSONDecodeError`` like any other text that is not JSON (never a ``RecursionError``).

Whatever is wrong is an ``InputFileError`` (a ``ValueError``) in one line naming the file (and
the line): not a regular file, over the limit, not UTF-8, not JSON (with where), nested too
deep. The caller turns it into its command's error. Imports nothing of the project.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

__all__ = [
    "MAX_INPUT_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_JSON_LINE_BYTES",
    "InputFileError",
    "json_depth",
    "json_lines",
    "json_text",
    "open_regular",
    "parse_json",
    "read_input",
    "read_json",
    "read_upto",
]

MAX_INPUT_BYTES = 2**30
"""The most bytes one input file may hold (1 GiB): more is refused before it is parsed."""
MAX_JSON_LINE_BYTES = 64 * 2**20
"""The most bytes one line of a JSON-lines input file may hold (64 MiB)."""
MAX_JSON_DEPTH = 256
"""How deep a JSON value of an input file may nest (arrays and objects): deeper is refused,
instead of a ``RecursionError`` in whatever walks it next."""


class InputFileError(ValueError):
    """An input file that cannot be read as asked; the message names it, in one line."""


def open_regular(path: str | Path) -> BinaryIO:
    """``path`` opened for reading, when it is a regular file (a link to one included);
    ``InputFileError`` for anything else (a FIFO, a device, a folder) and for what the system
    refuses (it does not exist, no permission), unread."""
    try:  # through open(), so the file's name is its path (readers name it in messages)
        fh = open(path, "rb", opener=_nonblocking)  # noqa: SIM115 (returned open)
    except IsADirectoryError:
        raise InputFileError(f"{path}: not a regular file") from None
    except OSError as e:
        raise InputFileError(f"{path}: {e.strerror or e}") from e
    try:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            raise InputFileError(f"{path}: not a regular file")
        os.set_blocking(fh.fileno(), True)
        return fh
    except BaseException:
        fh.close()
        raise


def _nonblocking(path: str, flags: int) -> int:
    """Opens without waiting for a writer (a FIFO's open blocks until one comes)."""
    return os.open(path, os.O_RDONLY | os.O_NONBLOCK)


def read_upto(fh: BinaryIO, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of ``fh``, read a chunk at a time (``read(limit + 1)`` would
    set aside ``limit`` bytes of memory whatever the file holds)."""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = fh.read(min(_CHUNK, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


_CHUNK = 1 << 20


def read_input(path: str | Path, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of the regular file ``path``, at most ``limit`` (``InputFileError``)."""
    with open_regular(path) as fh:
        try:
            data = read_upto(fh, limit)
        except OSError as e:
            raise InputFileError(f"{path}: {e.strerror or e}") from e
    if len(data) > limit:
        raise InputFileError(f"{path}: over {limit} bytes, the most an input file may hold")
    return data


def read_json(path: str | Path, limit: int = MAX_INPUT_BYTES) -> Any:
    """The JSON document in the regular file ``path`` (module doc); ``InputFileError``."""
    return parse_json(read_input(path, limit), str(path))


def json_lines(
    path: str | Path, line_limit: int = MAX_JSON_LINE_BYTES
) -> Iterator[tuple[int, Any]]:
    """``(line number, value)`` of each non-blank line of the JSON-lines file ``path``, read a
    line at a time (module doc); ``InputFileError`` naming the file and line."""
    total = 0
    with open_regular(path) as fh:
        for number, line in enumerate(iter(lambda: fh.readline(line_limit + 1), b""), 1):
            total += len(line)
            if total > MAX_INPUT_BYTES:
                raise InputFileError(
                    f"{path}: over {MAX_INPUT_BYTES} bytes, the most an input file may hold"
                )
            if len(line) > line_limit:
                raise InputFileError(f"{path}: line {number} is over {line_limit} bytes")
            if line.strip():
                yield number, parse_json(line, f"{path}: line {number}")


def parse_json(data: bytes, where: str) -> Any:
    """``data`` as one JSON value, nested at most ``MAX_JSON_DEPTH`` deep; ``InputFileError``
    starting with ``where``."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise InputFileError(f"{where}: not UTF-8 text (byte {e.start})") from e
    too_deep = InputFileError(f"{where}: JSON nested deeper than {MAX_JSON_DEPTH} levels")
    try:
        value = json.loads(text)
    except json.JSONDecodeError as e:
        problem = f"{e.msg} at line {e.lineno} column {e.colno}"
        raise InputFileError(f"{where}: not JSON ({problem})") from e
    except RecursionError:
        raise too_deep from None
    except ValueError as e:  # a number too long to read
        raise InputFileError(f"{where}: not JSON ({e})") from e
    if json_depth(value) > MAX_JSON_DEPTH:
        raise too_deep
    return value


def json_text(text: str | bytes) -> Any:
    """``json.loads(text)`` for text from elsewhere (module doc)."""
    try:
        value = json.loads(text)
    except RecursionError:
        value = None
    else:
        if json_depth(value) <= MAX_JSON_DEPTH:
            return value
    shown = text if isinstance(text, str) else text.decode("utf-8", "replace")
    raise json.JSONDecodeError(f"nested deeper than {MAX_JSON_DEPTH} levels", shown, 0)


def json_depth(value: Any) -> int:
    """How deep ``value`` nests (a scalar: 0, ``[1]``: 1), counted without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth += 1
            deepest = max(deepest, depth)
            stack.extend((x, depth) for x in item)
    return deepest
