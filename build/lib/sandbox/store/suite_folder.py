"""Where the suite a command names is: the default suite resolves from the installed package.

``sandbox run`` defaults to ``scenarios/default``, a path relative to the checkout. Outside it
(any other working directory, an installed wheel), that path does not exist; the same suite ships
inside the package (``sandbox/suites/default``, a link to ``scenarios/default`` in the checkout,
package data in a wheel), and ``suite_folder`` returns it instead. Any other path, and the default
path when it exists where the command runs, is returned as given. Imports ``defaults`` only.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from sandbox.store.defaults import DEFAULT_SUITE

__all__ = ["packaged_default_suite", "suite_folder"]


def packaged_default_suite() -> Path:
    """The default suite as installed with the package."""
    return Path(str(files("sandbox"))) / "suites" / "default"


def suite_folder(path: str | Path) -> str:
    """``path``, or the packaged default suite when ``path`` is the default suite's relative
    path and no such folder exists here."""
    if Path(path) == Path(DEFAULT_SUITE) and not Path(path).exists():
        packaged = packaged_default_suite()
        if packaged.is_dir():
            return str(packaged)
    return str(path)
