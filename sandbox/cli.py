"""The ``sandbox`` command line: parse, call one library function, map user errors to exits.

The top of the harness: may import any ``sandbox`` group.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys
from collections.abc import Collection, Sequence

from mock_tools.cli_parser import OneLineParser
from mock_tools.terminal_text import shown
from sandbox.commands import COMMANDS
from sandbox.errors import ConfigError, SandboxError
from sandbox.store.redact import redact


def build_parser(commands: Collection[str] | None = None) -> argparse.ArgumentParser:
    """The ``sandbox`` parser. Only the modules of ``commands`` (default: all) are imported; the
    other commands are listed from ``COMMANDS`` (their names and one-line help)."""
    parser = OneLineParser(
        prog="sandbox", description="Reproducible runner and evaluator for tool-using agents."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, entry in COMMANDS.items():
        if commands is None or name in commands:
            importlib.import_module(entry.module).register(subparsers)
        else:
            subparsers.add_parser(name, help=entry.help)
    return parser


def chosen_command(argv: list[str]) -> str | None:
    """The subcommand named on the command line, if any: the first word that is not an option
    (the top-level parser has no option taking a value)."""
    for arg in argv:
        if arg == "--":
            return None
        if not arg.startswith("-"):
            return arg if arg in COMMANDS else None
    return None


def main(argv: list[str] | None = None) -> int:
    # The MCP SDK logs a server's failures with tracebacks; the commands report them in one line.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    try:
        words = sys.argv[1:] if argv is None else argv
        check_words(words)
        chosen = chosen_command(words)
        args = build_parser([chosen] if chosen else []).parse_args(words)
        code = int(args.handler(args) or 0)
        sys.stdout.flush()
        return code
    except SandboxError as e:
        print(f"error: {shown(redact(str(e)))}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted; finished episodes are kept (use --resume to continue)", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return _reader_left()
    except OSError as e:  # a file or folder the user named: unreadable, read-only, full...
        print(f"error: {shown(redact(os_error_text(e)))}", file=sys.stderr)
        return 1


def check_words(words: Sequence[str]) -> None:
    """``ConfigError`` for a word of the command line that no option takes: text that is not
    UTF-8 (the shell passed bytes no record could hold) or an empty value (``--model ''``,
    ``--simulator=``), which would otherwise read as "not given"."""
    for i, word in enumerate(words):
        try:
            word.encode("utf-8")
        except UnicodeEncodeError:
            raise ConfigError(
                f"{_word_name(words, i)} is not UTF-8 text ({os.fsencode(word)!r}); "
                "the commands take UTF-8 arguments"
            ) from None
        name, eq, value = word.partition("=")
        if word.startswith("--") and eq and not value.strip():
            raise ConfigError(f"{name} was given an empty value: give one or leave {name} out")
        if not word.strip():
            raise ConfigError(
                f"{_word_name(words, i)} is empty: give a value or leave the option out"
            )


def _word_name(words: Sequence[str], i: int) -> str:
    before = words[i - 1] if i else ""
    if before.startswith("-") and "=" not in before:
        return f"the value of {before}"
    return f"argument {i + 1}"


def os_error_text(e: OSError) -> str:
    """An ``OSError`` as one line: the file and what went wrong with it."""
    what = e.strerror or str(e)
    return f"{e.filename}: {what}" if e.filename else what


def _reader_left() -> int:
    """stdout's reader went away (``sandbox ... | head``): stop quietly, as ``cat`` does.

    Python would otherwise report the failed flush of stdout again at exit; pointing stdout at
    /dev/null makes that last flush succeed. Everything a run writes to its folder is already
    on disk by then."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
    finally:
        os.close(devnull)
    return 141  # 128 + SIGPIPE, what a shell reports for a writer killed by a closed pipe


if __name__ == "__main__":
    sys.exit(main())
