"""The ``sandbox`` command line: parse, call one library function, map user errors to exits.

The top of the harness: may import any ``sandbox`` group.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import sys

from sandbox.commands import COMMANDS
from sandbox.errors import SandboxError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sandbox", description="Reproducible runner and evaluator for tool-using agents."
    )
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for module_name in COMMANDS.values():
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    # The MCP SDK logs a server's failures with tracebacks; the commands report them in one line.
    logging.getLogger("mcp").setLevel(logging.CRITICAL)
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or 0)
    except SandboxError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted; finished episodes are kept (use --resume to continue)", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
