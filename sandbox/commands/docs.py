"""The flag tables of docs/cli.md, made from the commands' parsers and their settings models.

``python -m sandbox.commands.docs`` rewrites every generated block of docs/cli.md (``make docs``);
``--check`` only says whether they are up to date (exit 1 when not; ``tests/test_cli_docs.py``
runs it). A block sits between ``<!-- BEGIN GENERATED: NAME -->`` and ``<!-- END GENERATED:
NAME -->``; its rows are the command's flags, grouped as ``--help`` groups them, each with the
setting it sets (its path in a ``--config`` file and for ``-C``) and what it means: the field's
description, the registry's entries and the default, as ``sandbox.commands.settings_flags``
writes them. A flag another block already lists, for the same setting, is left out
(``compare`` lists only what it adds to ``run``).
"""

from __future__ import annotations

import argparse
import importlib
import re
import sys
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel

from sandbox.commands import COMMANDS
from sandbox.commands.agent_options import DEST, agent_option_flags, flag_metavar, option_help
from sandbox.commands.settings_flags import flag_help, metavar
from sandbox.store.setting import SettingField, setting_fields

__all__ = ["BLOCKS", "Block", "main", "render", "update_doc"]

DOC = Path(__file__).resolve().parents[2] / "docs" / "cli.md"


@dataclass(frozen=True)
class Block:
    """A generated part of docs/cli.md: the flags of one command's parser."""

    command: str
    model: Callable[[], type[BaseModel]]
    skip: Callable[[], Collection[str]] = frozenset


def _run_model() -> type[BaseModel]:
    from sandbox.store.config import RunConfig

    return RunConfig


def _compare_model() -> type[BaseModel]:
    from sandbox.commands.compare import CompareConfig

    return CompareConfig


def _eval_model() -> type[BaseModel]:
    from sandbox.commands.eval import EvalSettings

    return EvalSettings


def _run_flags() -> set[str]:
    """``run``'s flags with the setting each sets (``FLAG=dest``): a flag of ``compare`` that
    sets another setting under the same name (``--judge``: the comparison's judge, not the
    run's) is listed."""
    return {f"{o}={a.dest}" for a in parser_of("run")._actions for o in a.option_strings}  # noqa: SLF001


BLOCKS: dict[str, Block] = {
    "run": Block("run", _run_model),
    "compare": Block("compare", _compare_model, skip=_run_flags),
    "eval": Block("eval", _eval_model),
}


def parser_of(command: str) -> argparse.ArgumentParser:
    """The parser of ``sandbox <command>``."""
    top = argparse.ArgumentParser(prog="sandbox")
    subparsers = top.add_subparsers()
    importlib.import_module(COMMANDS[command].module).register(subparsers)
    parser: argparse.ArgumentParser = subparsers.choices[command]
    return parser


def render(block: Block) -> str:
    """The markdown of a block: a table per argument group of the command's parser."""
    parser = parser_of(block.command)
    settings = {s.path: s for s in setting_fields(block.model())}
    skip = set(block.skip())
    parts = []
    for group in parser._action_groups:  # noqa: SLF001
        rows = [
            _row(action, settings)
            for action in group._group_actions  # noqa: SLF001
            if action.option_strings
            and action.dest != "help"
            and not {f"{o}={action.dest}" for o in action.option_strings} <= skip
        ]
        if not rows:
            continue
        title = "" if group.title in ("options", "optional arguments") else group.title
        about = f"{group.description.strip()}" if group.description else ""
        if title:
            parts.append(f"**{title}**" + (f": {about}" if about else ""))
        parts.append("| flag | setting | meaning |\n|---|---|---|\n" + "\n".join(rows))
    return "\n\n".join(parts)


def _row(action: argparse.Action, settings: dict[str, SettingField]) -> str:
    setting = settings.get(action.dest)
    if setting is not None:
        shown = metavar(setting) or _choices(action)
        return _line(action.option_strings, shown, f"`{setting.path}`", flag_help(setting))
    if action.dest.startswith(DEST):
        name = action.dest.removeprefix(DEST)
        for flag, field, owners in agent_option_flags():
            if flag == f"--{name.replace('_', '-')}":
                meaning = option_help(field, owners, name)
                return _line(
                    action.option_strings, flag_metavar(field), f"`{action.dest}`", meaning
                )
    shown = action.metavar if isinstance(action.metavar, str) else _choices(action)
    return _line(action.option_strings, shown, "", (action.help or "").replace("%%", "%"))


def _choices(action: argparse.Action) -> str | None:
    return "|".join(str(c) for c in action.choices) if action.choices else None


def _line(options: Sequence[str], shown: str | None, key: str, meaning: str) -> str:
    flags = ", ".join(f"`{o} {shown}`" if shown else f"`{o}`" for o in options)
    cells = [flags, key, meaning.strip().rstrip(".").replace("\n", " ")]
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def _markers(name: str) -> tuple[str, str]:
    return (
        f"<!-- BEGIN GENERATED: {name} (python -m sandbox.commands.docs) -->",
        f"<!-- END GENERATED: {name} -->",
    )


def update_doc(text: str) -> str:
    """``text`` (docs/cli.md) with every generated block made again."""
    for name, block in BLOCKS.items():
        begin, end = _markers(name)
        pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.DOTALL)
        if not pattern.search(text):
            raise ValueError(f"docs/cli.md has no generated block {name!r} ({begin})")
        body = f"{begin}\n\n{render(block)}\n\n{end}"
        text = pattern.sub(body.replace("\\", "\\\\"), text)
    return text


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m sandbox.commands.docs", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="only check, write nothing")
    parser.add_argument("--doc", type=Path, default=DOC, help="the file (default docs/cli.md)")
    args = parser.parse_args(argv)
    text = args.doc.read_text(encoding="utf-8")
    fresh = update_doc(text)
    if fresh == text:
        return 0
    if args.check:
        print(f"{args.doc} is out of date: run `make docs`", file=sys.stderr)
        return 1
    args.doc.write_text(fresh, encoding="utf-8")
    print(f"rewrote the generated tables of {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
