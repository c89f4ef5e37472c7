"""``python -m bench [NAME...] [--quick]``: run the registered benchmarks, print a table and JSON.

The JSON is also written to ``bench/results/<UTC timestamp>.json`` (gitignored). Besides each
benchmark's figures it holds the machine (CPU model and count, memory, the load average at the
start and the end) and ``targets``: every figure an issue sets a goal for, measured in one run
against its anchor, with the goal, whether it is met and the load average while its benchmark
ran; the table ends with the same lines.
"""

from __future__ import annotations

import argparse
import json
import os
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
    scale_bench,
    startup_bench,
    stb_bench,
    store_bench,
    view_bench,
    world_bench,
)
from bench.report import BenchResult, format_table, format_targets

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
    "scale": scale_bench.run,
    "external": external_bench.run,
    "realmodel": realmodel_bench.run,
    "worlds": world_bench.run,
}


def _measured(bench: Callable[[bool], BenchResult], quick: bool) -> BenchResult:
    before = os.getloadavg()[0]
    result = bench(quick)
    result.load = (before, os.getloadavg()[0])
    return result


def _host(load: tuple[float, float, float]) -> dict[str, object]:
    """The machine the figures were measured on, and how loaded it was when the run started."""
    cpu = ""
    info = Path("/proc/cpuinfo")
    if info.exists():
        names = [
            ln.split(":", 1)[1].strip()
            for ln in info.read_text().splitlines()
            if ln.startswith("model name")
        ]
        cpu = names[0] if names else ""
    memory = (
        os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") if hasattr(os, "sysconf") else 0
    )
    return {
        "cpu": cpu or platform.processor(),
        "cores": os.cpu_count(),
        "memory_gb": round(memory / 2**30, 1),
        "system": f"{platform.system()} {platform.release()}",
        "load_average_start": [round(x, 2) for x in load],
        "load_average_end": [round(x, 2) for x in os.getloadavg()],
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
    started = os.getloadavg()
    results = [_measured(BENCHMARKS[name], args.quick) for name in args.names or BENCHMARKS]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    doc = {
        "timestamp": stamp,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "host": _host(started),
        "quick": args.quick,
        "results": {r.name: r.figures | {"load_average": r.load} for r in results},
        "targets": [
            t.as_json() | {"benchmark": r.name, "load_average": r.load}
            for r in results
            for t in r.targets
        ],
    }
    print(format_table(results))
    print(format_targets(results))
    print(json.dumps(doc, indent=2))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stamp}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
