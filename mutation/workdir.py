"""The folder a group's mutmut run works in: a copy of the checkout plus that run's settings.

mutmut reads its settings from ``pyproject.toml`` in the folder it runs in and writes its
mutants to ``mutants/`` there. Each group runs in its own copy of the checkout (the files git
tracks, and new files it does not ignore), whose ``pyproject.toml`` is the project's with a
``[tool.mutmut]`` section for that group appended, so the checkout itself is never touched and
groups never share a cache.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from mutation.modules import Group, module_path

__all__ = ["SOURCE_PACKAGES", "copy_checkout", "mutmut_settings", "prepare"]

SOURCE_PACKAGES = ("agents", "mock_tools", "sandbox")
"""Copied into ``mutants/`` by mutmut (only the group's modules get mutants)."""

ALSO_COPY = ("scenarios", "replays", "models.yaml", "examples", "docs", "sandbox/suites")
"""What the tests read besides the packages and ``tests/`` (``sandbox/suites/default`` is a
link to ``scenarios/default``, which mutmut's copy of the packages does not follow)."""

PYTEST_ARGS = ("-p", "no:cacheprovider")


def _project_files(root: Path) -> list[str]:
    """The files of the checkout: tracked, and untracked but not ignored."""
    out = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=root,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    return [f for f in out.split("\0") if f and (root / f).exists()]


def copy_checkout(root: Path, target: Path) -> None:
    """Copy the checkout's files (see ``_project_files``) into ``target``, links as links."""
    for name in _project_files(root):
        src, dst = root / name, target / name
        dst.parent.mkdir(parents=True, exist_ok=True)
        if src.is_symlink():
            dst.symlink_to(src.readlink())
        else:
            shutil.copy2(src, dst)


def _toml_list(values: Sequence[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def mutmut_settings(group: Group, *, type_check: bool) -> str:
    """The ``[tool.mutmut]`` section of a group's run."""
    selection = [*group.tests]
    for node in group.deselect:
        selection += ["--deselect", node]
    settings = {
        "source_paths": _toml_list(SOURCE_PACKAGES),
        "only_mutate": _toml_list([str(module_path(m)) for m in group.modules]),
        "also_copy": _toml_list(ALSO_COPY),
        "pytest_add_cli_args": _toml_list(PYTEST_ARGS),
        "pytest_add_cli_args_test_selection": _toml_list(selection),
        # a mutant's tests may legitimately take long the first time (imports, fixtures)
        "timeout_constant": "10.0",
    }
    if type_check:
        # mypy as `make lint` runs it; a mutant it rejects cannot be merged: it is caught
        command = [sys.executable, "-m", "mypy", "--output", "json", "--no-warn-unused-ignores"]
        command += [arg for package in SOURCE_PACKAGES for arg in ("-p", package)]
        settings["type_check_command"] = _toml_list(command)
    body = "\n".join(f"{key} = {value}" for key, value in settings.items())
    return f"\n[tool.mutmut]\n{body}\n"


def prepare(root: Path, work: Path, group: Group, *, type_check: bool, fresh: bool) -> Path:
    """Make (or, unless ``fresh``, reuse) the group's work folder under ``work``; return it.

    A reused folder keeps mutmut's results, so only functions changed since are tested again
    (and, by ``python -m mutation --reuse``, the survivors: ``results.retest_survivors``)."""
    folder = work / group.name
    if fresh and folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.iterdir():  # the checkout as it is now; mutmut's results stay
        if old.name != "mutants":
            shutil.rmtree(old) if old.is_dir() and not old.is_symlink() else old.unlink()
    copy_checkout(root, folder)
    project = (root / "pyproject.toml").read_text(encoding="utf-8")
    settings = mutmut_settings(group, type_check=type_check)
    (folder / "pyproject.toml").write_text(project + settings, encoding="utf-8")
    return folder
