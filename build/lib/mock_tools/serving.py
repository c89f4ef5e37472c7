"""Serving a suite from the command line: the options, the service they build, and the server.

``python -m mock_tools serve`` and ``sandbox serve`` share these: ``add_serve_arguments(parser)``
adds the flags, ``serve_options(args)`` checks them into ``ServeOptions``,
``build_service(options, simulator=...)`` makes the ``MockToolService`` and ``serve(service,
options)`` runs it: uvicorn with the HTTP routes (and MCP at ``/mcp`` with ``--mcp``), or MCP
over stdio with ``--mcp-stdio``. Bad options are a ``MockToolsError`` with a one-line message.
Imports uvicorn, FastAPI and the MCP SDK only when serving.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from mock_tools.errors import MockToolsError
from mock_tools.miss import DEFAULT_NEAREST_THRESHOLD, MISS_POLICIES, Simulator
from mock_tools.models import FAULT_KINDS, FaultConfig
from mock_tools.overlay import OVERLAY_FILE
from mock_tools.service import MockToolService, create_service
from mock_tools.validate import load_valid_suite

__all__ = ["ServeOptions", "add_serve_arguments", "build_service", "serve", "serve_options"]


class ServeOptions(BaseModel):
    """What ``serve`` was asked for."""

    suite: str
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=0, le=65535)
    miss_policy: str = "error"
    simulator: str | None = Field(
        default=None, description="For the simulate policy: schema-sim or a model name."
    )
    upstream_url: str | None = None
    overlay: str | None = Field(
        default=None, description="SQLite file keeping responses made on misses."
    )
    record_to: str | None = None
    nearest_threshold: float = Field(default=DEFAULT_NEAREST_THRESHOLD, ge=0, le=100)
    fault: FaultConfig | None = None
    log_level: str = "info"
    access_log: bool = Field(default=False, description="Log every request (off: faster).")
    mcp: bool = Field(default=False, description="Also serve MCP at /mcp (streamable HTTP).")
    mcp_stdio: bool = Field(default=False, description="Serve MCP over stdin/stdout only.")


def add_serve_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of ``serve`` (shared by ``python -m mock_tools serve`` and ``sandbox serve``)."""
    parser.add_argument("suite", help="suite folder (holds suite.yaml)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument(
        "--miss-policy",
        choices=list(MISS_POLICIES),
        default="error",
        help="what a call without a recording gets (simulate: a simulator writes it; "
        "upstream: forward it; both keep what they got in the overlay)",
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
    parser.add_argument("--nearest-threshold", type=float, default=DEFAULT_NEAREST_THRESHOLD)
    parser.add_argument("--fault-rate", type=float, default=0.0, help="share of calls that fault")
    parser.add_argument("--fault-seed", type=int, default=0)
    parser.add_argument(
        "--fault-kinds",
        default=",".join(FAULT_KINDS),
        help=f"comma-separated subset of {','.join(FAULT_KINDS)}",
    )
    parser.add_argument("--log-level", default="info")
    parser.add_argument(
        "--access-log",
        action="store_true",
        help="log every request (off by default: it costs about a sixth of the throughput)",
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
    """``ServeOptions`` from parsed flags; ``MockToolsError`` naming what is wrong."""
    fault = None
    if args.fault_rate > 0:
        kinds = [k.strip() for k in args.fault_kinds.split(",") if k.strip()]
        try:
            fault = FaultConfig(rate=args.fault_rate, seed=args.fault_seed, kinds=kinds)
        except ValueError as e:
            raise MockToolsError(f"invalid fault settings: {_first(e)}") from None
    if args.miss_policy == "upstream" and not args.upstream_url:
        raise MockToolsError("--miss-policy upstream needs --upstream-url")
    if args.miss_policy == "simulate" and not args.simulator:
        raise MockToolsError(
            "--miss-policy simulate needs --simulator (schema-sim offline, or a model name)"
        )
    if args.overlay is not None and args.record_to is not None:
        raise MockToolsError("give --overlay or --record-to, not both")
    overlay = args.overlay
    if overlay is None and args.record_to is None and args.miss_policy in ("simulate", "upstream"):
        overlay = str(Path(args.suite) / OVERLAY_FILE)
    try:
        return ServeOptions(
            suite=args.suite,
            host=args.host,
            port=args.port,
            miss_policy=args.miss_policy,
            simulator=args.simulator,
            upstream_url=args.upstream_url,
            overlay=overlay,
            record_to=args.record_to,
            nearest_threshold=args.nearest_threshold,
            fault=fault,
            log_level=args.log_level,
            access_log=args.access_log,
            mcp=args.mcp,
            mcp_stdio=args.mcp_stdio,
        )
    except ValidationError as e:
        raise MockToolsError(f"invalid serve options: {_first(e)}") from None


def build_service(options: ServeOptions, *, simulator: Simulator | None = None) -> MockToolService:
    """The service ``serve`` runs: the suite loaded, its miss policy built (``simulator``, when
    given, replaces the named ``options.simulator`` of the ``simulate`` policy), faults and the
    overlay or recording file set."""
    suite = load_valid_suite(options.suite)  # what `validate` rejects is not served
    if not suite.apis:
        raise MockToolsError(f"{options.suite} defines no tools to serve (a task file?)")
    return create_service(
        suite,
        miss_policy=options.miss_policy,
        fault=options.fault,
        simulator=simulator if simulator is not None else options.simulator,
        upstream_url=options.upstream_url,
        overlay=options.overlay,
        record_to=options.record_to,
        nearest_threshold=options.nearest_threshold,
    )


def serve(service: MockToolService, options: ServeOptions) -> None:
    """Run until stopped: MCP over stdio with ``mcp_stdio``, else uvicorn on host:port."""
    if options.mcp_stdio:
        import anyio

        from mock_tools.mcp_server import serve_stdio  # the MCP SDK only when serving MCP

        anyio.run(serve_stdio, service)
        return
    import uvicorn

    from mock_tools.http_app import http_app  # FastAPI only when serving HTTP

    app = http_app(service, mcp=options.mcp, host=options.host)
    uvicorn.run(
        app,
        host=options.host,
        port=options.port,
        log_level=options.log_level,
        access_log=options.access_log,
    )


def _first(e: ValueError) -> str:
    if isinstance(e, ValidationError):
        err = e.errors()[0]
        where = ".".join(str(p) for p in err["loc"])
        return f"{where}: {err['msg']}" if where else err["msg"]
    return str(e)
