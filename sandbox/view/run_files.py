"""The files of a run folder the viewer may read: regular files whose real path is inside it.

A runs folder is often someone else's to write (a shared folder, an unpacked archive). A
``pass_rate.png`` that is a symlink to ``/etc/passwd``, a ``manifest.json`` linked to another
user's file, or a FIFO or a device in place of a file would have the viewer serve, copy or
block on something outside the runs it was asked to show. So every file of a run that the viewer
serves, copies or parses (``manifest.json``, ``scores.json``, the trajectories file, the plots)
is first looked up here: it is taken only when it resolves, symlinks followed, to a regular file
inside the run's own folder (a link to a sibling file of the same run is fine). A run folder is
itself never reached through a symlink (``Catalog`` does not follow them).

Limit: the check and the read are two steps, so a file swapped for a symlink between them could
still be followed, except by ``read_run_file``, which opens the checked path without following a
last-component symlink and checks what it opened; the trajectories file is opened by the
store's ``EpisodeIndex`` after the check.
May import the libraries only.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

__all__ = ["NOT_INSIDE", "read_run_file", "run_file", "stray_file"]

NOT_INSIDE = "is not a regular file inside the run folder"
"""What the viewer says of a run file it refuses (a symlink out of the folder, a FIFO, a device)."""


def run_file(folder: Path, name: str) -> Path | None:
    """The real path of ``folder/name`` when it is a regular file inside ``folder`` (symlinks
    followed); None when it is missing, outside, or not a regular file."""
    try:
        base = folder.resolve(strict=True)
        real = (folder / name).resolve(strict=True)
        mode = os.stat(real).st_mode
    except (OSError, RuntimeError):  # missing, unreadable, or a symlink loop
        return None
    if real == base or not real.is_relative_to(base) or not stat.S_ISREG(mode):
        return None
    return real


def stray_file(folder: Path, name: str) -> bool:
    """True when ``folder/name`` is there (a dangling symlink too) but ``run_file`` refuses it."""
    return os.path.lexists(folder / name) and run_file(folder, name) is None


def read_run_file(folder: Path, name: str) -> bytes | None:
    """The bytes of ``folder/name`` when ``run_file`` accepts it, read from what was checked
    (opened without following a symlink, without blocking, and checked to be a regular file)."""
    real = run_file(folder, name)
    if real is None:
        return None
    try:
        fd = os.open(real, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:  # replaced by a symlink since the check, or gone
        return None
    with os.fdopen(fd, "rb") as fh:
        if not stat.S_ISREG(os.fstat(fh.fileno()).st_mode):
            return None
        return fh.read()
