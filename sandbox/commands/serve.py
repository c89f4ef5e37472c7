"""``sandbox serve``: serve a suite's mock tools to any client, over HTTP, MCP or both.

sandbox serve scenarios/default --port 8765                 # REST, /virtual, typed routes
sandbox serve scenarios/default --mcp                       # the same, plus MCP at /mcp
sandbox serve scenarios/default --mcp-stdio                 # MCP over stdin/stdout only
sandbox serve my_suite --miss-policy simulate --simulator qwen-7b   # a model plays misses
sandbox serve scenarios/default --config serve.yaml -C port=9000    # settings from a file

The flags are those of ``python -m mock_tools serve`` (``mock_tools.serving``); the server is
made in one place, ``build_service``. ``--config FILE`` and ``-C KEY=VALUE`` give the same
settings by the flags' names (``miss_policy: nearest``, ``port: 9000``): file < flags < -C.
"""

from __future__ import annotations

import argparse
from typing import Any

from mock_tools import MockToolsError, MockToolService
from mock_tools.serving import ServeOptions, add_serve_arguments, serve, serve_options
from mock_tools.serving import build_service as build_mock_service
from sandbox.commands import COMMANDS
from sandbox.commands.config_files import add_config_flags, flag_settings, namespace_settings
from sandbox.errors import ConfigError
from sandbox.store.suite_folder import suite_folder

__all__ = ["build_service", "options_from_args", "register"]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "serve",
        help=COMMANDS["serve"].help,
        description="Serve a suite's recorded tools to any client: the REST routes and "
        "StableToolBench's /virtual with uvicorn, MCP at /mcp with --mcp, or MCP over "
        "stdin/stdout with --mcp-stdio.",
    )
    add_serve_arguments(parser)
    add_config_flags(parser)
    parser.set_defaults(handler=handle, serve_flags=flag_settings(parser))


def options_from_args(args: argparse.Namespace) -> ServeOptions:
    """The ``ServeOptions`` of the config files, the flags given and ``-C``; ``ConfigError``."""
    try:
        options = serve_options(namespace_settings(args, args.serve_flags))
    except MockToolsError as e:
        raise ConfigError(str(e)) from e
    # scenarios/default from the package, outside a checkout
    return options.model_copy(update={"suite": suite_folder(options.suite)})


def build_service(options: ServeOptions) -> MockToolService:
    """The service ``sandbox serve`` runs.

    The one place the server is made from its options: the suite, its miss policy (a
    ``simulate`` policy's model is resolved through ``sandbox.models``, keys from the
    environment), faults and the overlay or recording file. ``ConfigError`` for options that do
    not fit or a suite that does not load."""
    try:
        return build_mock_service(options)
    except MockToolsError as e:
        raise ConfigError(str(e)) from e


def handle(args: argparse.Namespace) -> int:
    options = options_from_args(args)
    service = build_service(options)
    try:
        serve(service, options)
    except MockToolsError as e:  # where to listen: a port in use, a host that is none, a worker
        raise ConfigError(str(e)) from e
    return 0
