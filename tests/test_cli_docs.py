"""docs/cli.md documents every flag that ``--help`` shows, for ``sandbox`` and ``mock_tools``."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path

import pytest

from mock_tools.__main__ import _parser as mock_tools_parser
from sandbox.cli import build_parser

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
