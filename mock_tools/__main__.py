"""Commands: ``serve SUITE`` (uvicorn) and ``validate [SUITE...] [--json]``.

Imports the HTTP app only when serving (start-up of ``validate``).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from mock_tools.errors import MockToolsError
from mock_tools.miss import DEFAULT_NEAREST_THRESHOLD, MISS_POLICIES
from mock_tools.models import FAULT_KINDS, FaultConfig


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m mock_tools", description=__doc__)
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("serve", help="serve a suite over HTTP with uvicorn")
    s.add_argument("suite", help="suite folder (holds suite.yaml)")
    s.add_argument("--host", default="127.0.0.1")
    s.add_argument("--port", type=int, default=8765)
    s.add_argument(
        "--miss-policy",
        choices=list(MISS_POLICIES),
        default="error",
        help="what a call without a recording gets (simulate: a simulator writes it; "
        "upstream: forward it; both keep what they got in the overlay)",
    )
    s.add_argument(
        "--simulator",
        default=None,
        metavar="NAME",
        help="for --miss-policy simulate: schema-sim (offline), or with agent-sandbox installed "
        "any model name (an alias of models.yaml, openai:<model>@<base_url>)",
    )
    s.add_argument("--upstream-url", default=None, help="real base URL for --miss-policy upstream")
    s.add_argument(
        "--overlay",
        default=None,
        metavar="PATH",
        help="SQLite file keeping responses made on misses (default with simulate and upstream: "
        "the suite's overlay.sqlite; the suite's own files never change)",
    )
    s.add_argument(
        "--record-to",
        default=None,
        help="instead of an overlay, append responses made on misses to this JSONL file",
    )
    s.add_argument("--nearest-threshold", type=float, default=DEFAULT_NEAREST_THRESHOLD)
    s.add_argument("--fault-rate", type=float, default=0.0, help="share of calls that fault")
    s.add_argument("--fault-seed", type=int, default=0)
    s.add_argument(
        "--fault-kinds",
        default=",".join(FAULT_KINDS),
        help=f"comma-separated subset of {','.join(FAULT_KINDS)}",
    )
    s.add_argument("--log-level", default="info")

    v = sub.add_parser("validate", help="check suites (every suite under ./scenarios by default)")
    v.add_argument("suites", nargs="*", help="suite folders")
    v.add_argument("--json", action="store_true", help="print a JSON list of reports")
    return p


def _serve(args: argparse.Namespace) -> int:
    import uvicorn

    from mock_tools.http_app import create_app
    from mock_tools.miss import build_miss_policy
    from mock_tools.overlay import OVERLAY_FILE
    from mock_tools.suite import load_suite

    fault = None
    if args.fault_rate > 0:
        kinds = [k.strip() for k in args.fault_kinds.split(",") if k.strip()]
        try:
            fault = FaultConfig(rate=args.fault_rate, seed=args.fault_seed, kinds=kinds)
        except ValueError as e:
            raise MockToolsError(f"invalid fault settings: {e}") from None
    policy = build_miss_policy(
        args.miss_policy,
        simulator=args.simulator,
        upstream_url=args.upstream_url,
        threshold=args.nearest_threshold,
    )
    overlay = args.overlay
    if overlay is None and policy.records and args.record_to is None:
        overlay = str(Path(args.suite) / OVERLAY_FILE)
    app = create_app(
        load_suite(args.suite),
        miss_policy=policy,
        fault=fault,
        record_to=args.record_to,
        overlay=overlay,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level=args.log_level)
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
            status = "ok" if r.ok else f"{len(r.errors)} error(s)"
            print(
                f"{r.suite} ({r.path}): {r.tools} tools, {r.apis} apis, {r.tasks} tasks, "
                f"{r.recordings} recordings: {status}"
            )
            for e in r.errors:
                print(f"  - {e}")
    return 0 if all(r.ok for r in reports) else 1


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return _serve(args) if args.command == "serve" else _validate(args)
    except MockToolsError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
