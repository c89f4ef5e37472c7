"""``sandbox serve``: serve a suite's mock tools to any client, over HTTP, MCP or both.

sandbox serve scenarios/default --port 8765                 # REST, /virtual, typed routes
sandbox serve scenarios/default --mcp                       # the same, plus MCP at /mcp
sandbox serve scenarios/default --mcp-stdio                 # MCP over stdin/stdout only
sandbox serve my_suite --miss-policy simulate --simulator qwen-7b   # a model plays misses

The flags are those of ``python -m mock_tools serve`` (``mock_tools.serving``); the server is
made in one place, ``build_service``.
"""

from __future__ import annotations

import argparse
from typing import Any

from mock_tools import MockToolsError, MockToolService
from mock_tools.serving import ServeOptions, add_serve_arguments, serve, serve_options
from mock_tools.serving import build_service as build_mock_service
from sandbox.commands import COMMANDS
from sandbox.errors import ConfigError
from sandbox.store.suite_folder import suite_folder

__all__ = ["build_service", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help=COMMANDS["serve"].help,
        description="Serve a suite's recorded tools to any client: the REST routes and "
        "StableToolBench's /virtual with uvicorn, MCP at /mcp with --mcp, or MCP over "
        "stdin/stdout with --mcp-stdio.",
    )
    add_serve_arguments(parser)
    parser.set_defaults(handler=handle)


def build_service(args: argparse.Namespace) -> tuple[MockToolService, ServeOptions]:
    """The service ``sandbox serve`` runs, and the options it runs with.

    The one place the server is made from the flags: the suite, its miss policy (a ``simulate``
    policy's model is resolved through ``sandbox.models``, keys from the environment), faults and
    the overlay or recording file. ``ConfigError`` for bad
    flags or a suite that does not load."""
    args.suite = suite_folder(args.suite)  # scenarios/default from the package, outside a checkout
    try:
        options = serve_options(args)
        return build_mock_service(options), options
    except MockToolsError as e:
        raise ConfigError(str(e)) from e


def handle(args: argparse.Namespace) -> int:
    service, options = build_service(args)
    serve(service, options)
    return 0
