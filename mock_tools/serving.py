"""Serving a suite from the command line: the options, the service they build, and the server.

``python -m mock_tools serve`` and ``sandbox serve`` share these: ``add_serve_arguments(parser)``
adds the flags, ``serve_options(args)`` checks them into ``ServeOptions``,
``build_service(options, simulator=...)`` makes the ``MockToolService`` and ``serve(service,
options)`` runs it: uvicorn with the HTTP routes (and MCP at ``/mcp`` with ``--mcp``), or MCP
over stdio with ``--mcp-stdio``. Bad options are a ``MockToolsError`` with a one-line message.

The miss policy is any name ``MISS_POLICIES`` resolves (plugins included); its options come from
``--miss-option KEY=VALUE`` and from the flags that spell one (``--simulator``,
``--upstream-url``, ``--nearest-threshold``: given to the policy when it takes that option,
``--miss-option`` winning). Whether misses go to the overlay is the built policy's ``records``.
Imports uvicorn, FastAPI and the MCP SDK only when serving.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import BaseModel, Field, ValidationError, model_validator

from mock_tools.errors import MockToolsError
from mock_tools.listen import listen_socket
from mock_tools.miss import (
    MISS_POLICIES,
    Simulator,
    build_miss_policy,
    miss_policy_kind,
    miss_policy_options,
)
from mock_tools.models import FAULT_KINDS, FaultConfig
from mock_tools.overlay import OVERLAY_FILE
from mock_tools.plugins import option_pairs
from mock_tools.service import MockToolService, create_service
from mock_tools.validate import load_valid_suite

__all__ = [
    "SPELLED_OPTIONS",
    "ServeOptions",
    "add_serve_arguments",
    "build_service",
    "serve",
    "serve_options",
    "worker_app",
]

SPELLED_OPTIONS = {
    "simulator": "simulator",
    "upstream_url": "upstream_url",
    "nearest_threshold": "threshold",
}
"""Flags (their ``argparse`` dest) that spell a miss-policy option, and the option they give."""

EXCLUSIVE: tuple[tuple[str, str, str], ...] = (
    ("mcp", "mcp_stdio", "MCP over HTTP beside the routes, or over stdin/stdout with no HTTP"),
    ("overlay", "record_to", "answers made on misses go to one of them"),
)
"""Pairs of serve settings that exclude each other, and why."""

LogLevel = Literal["critical", "error", "warning", "info", "debug", "trace"]
"""uvicorn's log levels (``--log-level``)."""
LOG_LEVELS: tuple[str, ...] = get_args(LogLevel)


class ServeOptions(BaseModel):
    """What ``serve`` was asked for."""

    suite: str
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    miss_policy: str = "error"
    miss_options: dict[str, Any] = Field(
        default_factory=dict, description="The miss policy's options (validated by its class)."
    )
    overlay: str | None = Field(
        default=None,
        description="SQLite file keeping responses made on misses (default for a policy that "
        "records: the suite's overlay.sqlite).",
    )
    record_to: str | None = None
    fault: FaultConfig | None = None
    log_level: LogLevel = "info"
    access_log: bool = Field(default=False, description="Log every request (off: faster).")
    mcp: bool = Field(default=False, description="Also serve MCP at /mcp (streamable HTTP).")
    mcp_stdio: bool = Field(default=False, description="Serve MCP over stdin/stdout only.")
    workers: int = Field(
        default=1,
        ge=1,
        le=256,
        description="Server processes on the one port (SO_REUSEPORT), sharing the recording "
        "index and the overlay (``mock_tools.workers``).",
    )

    @model_validator(mode="after")
    def _one_of_each_pair(self) -> ServeOptions:
        """Settings that exclude each other, given together (by flags, a config file or
        ``-C``), are refused naming both, never one silently ignored."""
        for first, second, why in EXCLUSIVE:
            if getattr(self, first) not in (None, False) and getattr(self, second) not in (
                None,
                False,
            ):
                raise ValueError(f"{first} and {second} exclude each other ({why}): give one")
        return self


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``serve`` (shared by ``python -m mock_tools serve`` and ``sandbox serve``)."""
    parser.add_argument("suite", help="suite folder (holds suite.yaml)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--miss-policy",
        default="error",
        metavar="NAME",
        help=f"what a call without a recording gets: {', '.join(MISS_POLICIES.names())}, a "
        "plugin's name or package.module:Class (simulate: a simulator writes it; upstream: "
        "forward it; both keep what they got in the overlay)",
    )
    parser.add_argument(
        "--miss-option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the miss policy (VALUE as JSON, else text); repeatable",
    )
    parser.add_argument(
        "--simulator",
        default=None,
        metavar="NAME",
        help="for --miss-policy simulate: schema-sim (offline), or with agent-sandbox installed "
        "any model name (an alias of models.yaml, openai:<model>@<base_url>)",
    )
    parser.add_argument(
        "--upstream-url", default=None, help="real base URL for --miss-policy upstream"
    )
    parser.add_argument(
        "--overlay",
        default=None,
        metavar="PATH",
        help="SQLite file keeping responses made on misses (default with simulate and upstream: "
        "the suite's overlay.sqlite; the suite's own files never change)",
    )
    parser.add_argument(
        "--record-to",
        default=None,
        metavar="PATH",
        help="instead of an overlay, append responses made on misses to this JSONL file",
    )
    parser.add_argument(
        "--nearest-threshold",
        type=float,
        default=None,
        help="for --miss-policy nearest: its threshold option (0-100, default 90)",
    )
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of calls that fault")
    parser.add_argument("--fault-seed", type=int, default=0)
    parser.add_argument(
        "--fault-kinds",
        default=",".join(FAULT_KINDS),
        help=f"comma-separated subset of {','.join(FAULT_KINDS)}",
    )
    parser.add_argument("--log-level", default="info", choices=LOG_LEVELS)
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="log every request (off by default: it costs about a sixth of the throughput)",
    )
    parser.add_argument(
        "--workers",
        type=int,
        default=1,
        metavar="N",
        help="server processes on the one port (SO_REUSEPORT; default 1): each serves its "
        "connections on its own core; they share the recording index, and the overlay's claims "
        "keep one miss-policy call per distinct miss",
    )
    mcp = parser.add_mutually_exclusive_group()
    mcp.add_argument(
        "--mcp",
        action="store_true",
        help="also serve the APIs as MCP tools over streamable HTTP at /mcp",
    )
    mcp.add_argument(
        "--mcp-stdio",
        action="store_true",
        help="serve the APIs as MCP tools over stdin/stdout (no HTTP)",
    )


def serve_options(args: argparse.Namespace) -> ServeOptions:
    """``ServeOptions`` from parsed flags; ``MockToolsError`` naming what is wrong: a value no
    setting takes (a fault kind, a log level), a flag of a miss policy other than the one
    chosen (``--nearest-threshold`` without ``--miss-policy nearest``), a malformed URL."""
    kinds = [k.strip() for k in args.fault_kinds.split(",") if k.strip()]
    try:
        fault = FaultConfig(rate=args.fault_rate, seed=args.fault_seed, kinds=kinds)
    except ValueError as e:
        raise MockToolsError(f"invalid fault settings: {_first(e)}") from None
    if args.overlay is not None and args.record_to is not None:
        raise MockToolsError("give --overlay or --record-to, not both")
    takes = miss_policy_kind(args.miss_policy).options.model_fields
    miss_options = {}
    for dest, option in SPELLED_OPTIONS.items():
        value = getattr(args, dest, None)
        if value is None:
            continue
        if option not in takes:
            flag = "--" + dest.replace("_", "-")
            raise MockToolsError(
                f"{flag} is an option of another miss policy: --miss-policy {args.miss_policy} "
                f"takes no {option} (its options: {', '.join(takes) or 'none'})"
            )
        miss_options[option] = value
    miss_options.update(option_pairs(args.miss_option, "--miss-option"))
    miss_policy_options(args.miss_policy, miss_options)  # bad options fail before the suite loads
    _check_workers(args)
    try:
        return ServeOptions(
            suite=args.suite,
            host=args.host,
            port=args.port,
            miss_policy=args.miss_policy,
            miss_options=miss_options,
            overlay=args.overlay,
            record_to=args.record_to,
            fault=fault if fault.rate > 0 else None,
            log_level=args.log_level,
            access_log=args.access_log,
            mcp=args.mcp,
            mcp_stdio=args.mcp_stdio,
            workers=args.workers,
        )
    except ValidationError as e:
        raise MockToolsError(f"invalid serve options: {_first(e)}") from None


def _check_workers(args: argparse.Namespace) -> None:
    """``--workers`` above 1 only where the processes can share what a server keeps."""
    if args.workers < 1:
        raise MockToolsError(f"--workers must be at least 1 (got {args.workers})")
    if args.workers == 1:
        return
    for flag, given in (
        ("--mcp", args.mcp),
        ("--mcp-stdio", args.mcp_stdio),
        ("--record-to", args.record_to is not None),
    ):
        if given:
            why = "a file without claims" if flag == "--record-to" else "sessions of one process"
            raise MockToolsError(f"{flag} serves from one process ({why}): drop --workers")


def build_service(options: ServeOptions, *, simulator: Simulator | None = None) -> MockToolService:
    """The service ``serve`` runs: the suite loaded, its miss policy built with its options
    (``simulator``, when given, is its ``simulator`` option), faults, and where answers made on
    misses go: ``overlay``, ``record_to``, or for a policy that records, the suite's overlay."""
    suite = load_valid_suite(options.suite)  # what `validate` rejects is not served
    if not suite.apis:
        raise MockToolsError(f"{options.suite} defines no tools to serve (a task file?)")
    given = dict(options.miss_options)
    if simulator is not None:
        given["simulator"] = simulator
    policy = build_miss_policy(options.miss_policy, given)
    overlay = options.overlay
    if overlay is None and options.record_to is None and policy.records:
        overlay = str(Path(options.suite) / OVERLAY_FILE)
    return create_service(
        suite,
        miss_policy=policy,
        fault=options.fault,
        overlay=overlay,
        record_to=options.record_to,
    )


def serve(service: MockToolService, options: ServeOptions) -> None:
    """Run until stopped: MCP over stdio with ``mcp_stdio``, else uvicorn on host:port."""
    if options.mcp_stdio:
        import anyio

        from mock_tools.mcp_server import serve_stdio  # the MCP SDK only when serving MCP

        anyio.run(serve_stdio, service)
        return
    from mock_tools.http_app import http_app  # FastAPI only when serving HTTP
    from mock_tools.workers import serve_http

    # one process: a port in use is one line before uvicorn starts (workers bind their own)
    sock = listen_socket(options.host, options.port) if options.workers <= 1 else None
    if sock is None:
        # The workers bind with SO_REUSEPORT, which would let them join a port another server
        # holds and take part of its connections: the port must be free (one line if not).
        listen_socket(options.host, options.port).close()
    app = http_app(service, mcp=options.mcp, host=options.host)
    try:
        serve_http(app, options, worker_app, sock)
    except OSError as e:  # the port taken, a worker that could not start
        where = f"{options.host}:{options.port}"
        raise MockToolsError(
            f"cannot serve on {where} from {options.workers} processes: {e}"
        ) from e


def worker_app(options: ServeOptions) -> Any:
    """The app a worker process of ``serve --workers`` serves: its own service, built from the
    same options (``mock_tools.workers``)."""
    from mock_tools.http_app import http_app

    return http_app(build_service(options), host=options.host)


def _first(e: ValueError) -> str:
    if isinstance(e, ValidationError):
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        msg = str(err["msg"]).removeprefix("Value error, ")
        return f"{where}: {msg}" if where else msg
    return str(e)
