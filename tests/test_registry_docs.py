"""docs/architecture.md's table of registries lists exactly the built-in entries of each one."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from sandbox.cli import build_parser

DOC = (Path(__file__).resolve().parents[1] / "docs" / "architecture.md").read_text("utf-8")
TABLE = DOC.split("## Registries")[1].split("\n\n")[2]
ROWS = [line for line in TABLE.splitlines() if line.startswith("| ") and "`" in line]


def _registered(path: str) -> list[str]:
    module, _, name = path.rpartition(".")
    build_parser()  # every command's modules: each registry holds its built-ins
    return list(getattr(importlib.import_module(module), name))


def test_the_table_has_a_row_per_registry() -> None:
    assert len(ROWS) >= 7, TABLE


@pytest.mark.parametrize("row", ROWS, ids=lambda r: r.split("|")[1].strip())
def test_each_row_lists_the_registry_built_ins(row: str) -> None:
    cells = [c.strip() for c in row.strip("|").split("|")]
    registry = cells[1].strip("`")
    listed = re.findall(r"`([^`]+)`", cells[-1])
    assert sorted(listed) == sorted(_registered(registry)), f"{registry}: update the table"
