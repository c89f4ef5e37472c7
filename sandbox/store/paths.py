"""``usable_file_path``: whether a setting's path can name a file the command will create or open.

A cache file (``--model-cache``, ``--judge-cache``) is made when first written, maybe long after
the command started, and only if the run needs it; a path that can never be a file (a folder, or
one below a file) is refused when the setting is read instead. Imports nothing of the project.
"""

from __future__ import annotations

from pathlib import Path

__all__ = ["usable_file_path"]


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
