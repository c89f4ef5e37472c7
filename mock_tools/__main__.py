"""Commands: ``serve SUITE [--mcp | --mcp-stdio]`` and ``validate [SUITE...] [--json]``.

``serve`` is ``mock_tools.serving`` (which imports uvicorn, FastAPI and the MCP SDK only when
serving, for the start-up of ``validate``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence

from mock_tools.cli_parser import OneLineParser
from mock_tools.errors import MockToolsError
from mock_tools.serving import add_serve_arguments, build_service, serve, serve_options
from mock_tools.terminal_text import shown


def _parser() -> argparse.ArgumentParser:
    p = OneLineParser(
        prog="python -m mock_tools",
        description="Serve a suite of recorded tool responses, or check suites. "
        "Exit codes: 0 done; 1 a suite that fails validation; 2 bad input (a suite that "
        "does not load, bad options).",
    )
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="serve a suite over HTTP with uvicorn (and MCP)")
    add_serve_arguments(s)

    v = sub.add_parser("validate", help="check suites (every suite under ./scenarios by default)")
    v.add_argument("suites", nargs="*", help="suite folders")
    v.add_argument("--json", action="store_true", help="print a JSON list of reports")
    v.add_argument(
        "--strict",
        action="store_true",
        help="fail on warnings too (a reference call without a recording)",
    )
    return p


def _serve(args: argparse.Namespace) -> int:
    options = serve_options(args)
    serve(build_service(options), options)
    return 0


def _validate(args: argparse.Namespace) -> int:
    from mock_tools.validate import find_suites, validate_suites

    paths = args.suites or find_suites("scenarios")
    if not paths:
        raise MockToolsError("no suites found under scenarios/ (folders with a suite.yaml)")
    reports = validate_suites(paths)
    if args.json:
        print(json.dumps([r.model_dump(exclude={"path"}) for r in reports], indent=2))
    else:
        for r in reports:
            print(shown(r.summary()))
            for e in r.errors:
                print(f"  - {shown(e)}")
            for w in r.warnings:
                print(f"  ! {shown(w)}")
    failed = [r for r in reports if not r.ok or (args.strict and r.warnings)]
    return 1 if failed else 0


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _serve(args) if args.command == "serve" else _validate(args)
    except MockToolsError as e:  # a suite that does not load, options that do not fit: bad input
        print(f"error: {shown(str(e))}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
