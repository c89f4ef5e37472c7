"""Paths a setting names: ``usable_file_path`` (whether it can name a file the command will
create or open) and ``read_regular_file`` (a file's bytes, read only when it is a regular file of
bounded size).

A cache file (``--model-cache``, ``--judge-cache``) is made when first written, maybe long after
the command started, and only if the run needs it; a path that can never be a file (a folder, or
one below a file) is refused when the setting is read instead. Imports ``input_files`` only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from sandbox.store.input_files import read_upto

__all__ = ["read_regular_file", "usable_file_path"]


def usable_file_path(value: str | None) -> str | None:
    """``value`` when it is None or can name a file: not a folder, and the nearest part of it
    that exists is a folder; ``ValueError`` naming the part that is not."""
    if value is None:
        return value
    path = Path(value)
    if path.is_dir():
        raise ValueError(f"{value} is a folder, not a file")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise ValueError(f"{value} cannot be a file: {parent} is not a folder")
            break
    return value


def read_regular_file(path: str | Path, limit: int) -> bytes:
    """The bytes of ``path`` when it is a regular file of at most ``limit`` bytes; ``ValueError``
    naming what it is instead (a FIFO would block the read, a device such as ``/dev/zero`` never
    end); ``OSError`` as the system gives it (``FileNotFoundError`` included). The file is opened
    without blocking and checked once open, so nothing swapped in between is read."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError(f"{path} is not a regular file")
        data = read_upto(fh, limit)
    if len(data) > limit:
        raise ValueError(f"{path} is over {limit} bytes, the most it may hold")
    return data
