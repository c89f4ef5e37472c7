"""docs/cli.md documents every flag that ``--help`` shows, for ``sandbox`` and ``mock_tools``, and
its generated tables are those the settings models make."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import BaseModel

from mock_tools.__main__ import _parser as mock_tools_parser
from sandbox.cli import build_parser
from sandbox.commands.agent_options import DEST
from sandbox.commands.compare import NOT_FLAGS, CompareConfig
from sandbox.commands.docs import update_doc
from sandbox.commands.eval import EvalSettings
from sandbox.store.config import RunConfig
from sandbox.store.setting import setting_fields

DOC = (Path(__file__).resolve().parents[1] / "docs" / "cli.md").read_text(encoding="utf-8")


def _commands(
    parser: argparse.ArgumentParser, prefix: str
) -> Iterator[tuple[str, argparse.ArgumentParser]]:
    yield prefix, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from _commands(sub, f"{prefix} {name}")


COMMANDS = [*_commands(build_parser(), "sandbox"), *_commands(mock_tools_parser(), "mock_tools")]


@pytest.mark.parametrize("name,parser", COMMANDS, ids=[c[0] for c in COMMANDS])
def test_every_flag_is_documented(name: str, parser: argparse.ArgumentParser) -> None:
    flags = [
        option
        for action in parser._actions
        for option in action.option_strings
        if option.startswith("--") and option != "--help"
    ]
    missing = [f for f in flags if f"`{f}" not in DOC]
    assert missing == [], f"{name}: add {missing} to docs/cli.md"
    if name.count(" ") == 1:
        assert name.split(" ")[1] in DOC


def test_the_generated_tables_of_docs_cli_md_are_current() -> None:
    """The run, compare and eval tables are what `make docs` writes from the settings models:
    a setting without its row, or a row of a setting that is gone, fails here."""
    assert update_doc(DOC) == DOC, "docs/cli.md is out of date: run `make docs`"


@pytest.mark.parametrize(
    ("block", "model", "documented_elsewhere"),
    [
        ("run", RunConfig, set()),
        ("compare", CompareConfig, {s.path for s in setting_fields(RunConfig)}),
        ("eval", EvalSettings, set()),
    ],
)
def test_every_setting_has_a_doc_row_and_every_row_a_setting(
    block: str, model: type[BaseModel], documented_elsewhere: set[str]
) -> None:
    """A field added to a settings model without its row fails, and so does a row left behind
    by a field that is gone (agent options are rows of the strategies' options classes)."""
    text = DOC.split(f"<!-- BEGIN GENERATED: {block} ")[1].split(f"<!-- END GENERATED: {block}")[0]
    rows = set(re.findall(r"^\| .*? \| `([A-Za-z_.]+)` \|", text, re.MULTILINE))
    settings = {s.path for s in setting_fields(model)} - documented_elsewhere
    assert sorted(settings - rows - set(NOT_FLAGS)) == [], f"no row in docs/cli.md ({block})"
    stale = {r for r in rows - settings if not r.startswith(DEST)}
    assert sorted(stale) == [], f"rows of settings that do not exist ({block})"
