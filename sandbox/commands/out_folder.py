"""``out_folder``: a folder a command is told to write into, checked before anything is read."""

from __future__ import annotations

from pathlib import Path

from sandbox.errors import ConfigError

__all__ = ["out_folder"]


def out_folder(path: Path, option: str) -> Path:
    """``path`` when it is a folder or nothing yet (it is made when written); ``ConfigError``
    (exit 2) naming ``option`` when it is a file or anything else that is no folder."""
    if path.exists() and not path.is_dir():
        raise ConfigError(f"{option} {path} is a file, not a folder: name a folder to write into")
    return path
