"""``python -m bench [NAME...] [--quick]``: run the registered benchmarks, print a table and JSON.

The JSON is also written to ``bench/results/<UTC timestamp>.json`` (gitignored).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from bench import (
    external_bench,
    harness_bench,
    http_bench,
    miss_bench,
    mock_tools_bench,
    model_bench,
    ray_bench,
    realmodel_bench,
    startup_bench,
    stb_bench,
    store_bench,
    view_bench,
)
from bench.report import BenchResult, format_table

BENCHMARKS: dict[str, Callable[[bool], BenchResult]] = {
    "mock_tools": mock_tools_bench.run,
    "store": store_bench.run,
    "misses": miss_bench.run,
    "http": http_bench.run,
    "stb": stb_bench.run,
    "startup": startup_bench.run,
    "harness": harness_bench.run,
    "model": model_bench.run,
    "view": view_bench.run,
    "ray": ray_bench.run,
    "external": external_bench.run,
    "realmodel": realmodel_bench.run,
}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    p.add_argument("names", nargs="*", help=f"benchmarks to run (default all: {list(BENCHMARKS)})")
    p.add_argument("--quick", action="store_true", help="smaller sizes and shorter loads")
    p.add_argument("--out", default=str(Path(__file__).parent / "results"))
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        print(f"error: unknown benchmark(s) {unknown}; known: {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    results = [BENCHMARKS[name](args.quick) for name in args.names or BENCHMARKS]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    doc = {
        "timestamp": stamp,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "quick": args.quick,
        "results": {r.name: r.figures for r in results},
    }
    print(format_table(results))
    print(json.dumps(doc, indent=2))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stamp}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
