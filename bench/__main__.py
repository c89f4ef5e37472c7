"""``python -m bench [NAME...] [--quick] [--cores LAYOUT] [--max-seconds S]``: run the
registered benchmarks, print a table and JSON.

``--cores`` (``bench.cores``: ``auto``, ``shared`` or ``SERVERS/LOAD``) pins the benchmarks'
servers and their load generator to cores apart when the machine has them. ``--max-seconds``
(default 900) bounds each benchmark: it runs in a child process of its own session, stopped
with everything it started once that time has passed; its row then says it did not finish, and
the run goes on to the next one (0: no bound, every benchmark in this process).

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
import signal
import subprocess
import sys
import tempfile
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
    reuseport_spread,
    scale_bench,
    startup_bench,
    stb_bench,
    store_bench,
    view_bench,
    world_bench,
)
from bench.cores import CoreLayout, parse_cores
from bench.report import BenchResult, format_table, format_targets

Bench = Callable[[bool, CoreLayout], BenchResult]


def _on_any_cores(run: Callable[[bool], BenchResult]) -> Bench:
    """A benchmark that starts no server and no load generator: the layout changes nothing."""
    return lambda quick, _cores: run(quick)


BENCHMARKS: dict[str, Bench] = {
    "mock_tools": _on_any_cores(mock_tools_bench.run),
    "store": _on_any_cores(store_bench.run),
    "misses": _on_any_cores(miss_bench.run),
    "http": http_bench.run,
    "stb": stb_bench.run,
    "spread": reuseport_spread.run,
    "startup": _on_any_cores(startup_bench.run),
    "harness": _on_any_cores(harness_bench.run),
    "model": model_bench.run,
    "view": _on_any_cores(view_bench.run),
    "ray": _on_any_cores(ray_bench.run),
    "scale": _on_any_cores(scale_bench.run),
    "external": _on_any_cores(external_bench.run),
    "realmodel": _on_any_cores(realmodel_bench.run),
    "worlds": _on_any_cores(world_bench.run),
}
DEFAULT_MAX_SECONDS = 900.0


def _measured(name: str, quick: bool, cores: CoreLayout) -> BenchResult:
    before = os.getloadavg()[0]
    result = BENCHMARKS[name](quick, cores)
    result.load = (before, os.getloadavg()[0])
    return result


def bounded(argv: list[str], seconds: float) -> int | None:
    """Run ``argv`` in a session of its own; past ``seconds``, kill the whole session (the
    servers and load generators it started included) and answer None, else its exit status."""
    proc = subprocess.Popen(argv, start_new_session=True)
    try:
        return proc.wait(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None
    finally:
        if proc.poll() is None:  # interrupted: take the session down with us
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _in_child(name: str, args: argparse.Namespace, seconds: float) -> BenchResult:
    """One benchmark in a child process, stopped past ``seconds`` (see the module doc)."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        argv = [sys.executable, "-m", "bench", name, "--cores", args.cores, "--max-seconds", "0"]
        argv += ["--quick"] * args.quick + ["--child-result", str(out)]
        before = os.getloadavg()[0]
        status = bounded(argv, seconds)
        load = (before, os.getloadavg()[0])
        if status == 0 and out.is_file():
            return BenchResult.from_json(json.loads(out.read_text()))
    why = f"did not finish within {seconds:g} s" if status is None else f"failed (exit {status})"
    result = BenchResult(name, rows=[("not measured", why)], load=load)
    result.figures["not_measured"] = why
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
    p.add_argument(
        "--cores",
        default="auto",
        help="auto (the load generator on the last quarter of the cores when there are 4 or "
        "more), shared (nothing pinned), or SERVERS/LOAD such as 0-11/12-15",
    )
    p.add_argument(
        "--max-seconds",
        type=float,
        default=DEFAULT_MAX_SECONDS,
        help=f"stop a benchmark after this long (default {DEFAULT_MAX_SECONDS:g}; 0: no bound)",
    )
    p.add_argument("--child-result", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        print(f"error: unknown benchmark(s) {unknown}; known: {list(BENCHMARKS)}", file=sys.stderr)
        return 2
    if args.max_seconds < 0:
        print("error: --max-seconds must be 0 (no bound) or more", file=sys.stderr)
        return 2
    try:
        cores = parse_cores(args.cores)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    names = args.names or list(BENCHMARKS)
    if args.child_result is not None:  # one benchmark for a bounded parent (``_in_child``)
        (result,) = [_measured(name, args.quick, cores) for name in names[:1]]
        args.child_result.write_text(json.dumps(result.as_json()))
        return 0
    started = os.getloadavg()
    results = [
        _in_child(name, args, args.max_seconds)
        if args.max_seconds
        else _measured(name, args.quick, cores)
        for name in names
    ]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    doc = {
        "timestamp": stamp,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "host": _host(started),
        "quick": args.quick,
        "cores": cores.as_json(),
        "max_seconds": args.max_seconds or None,
        "results": {r.name: r.figures | {"load_average": r.load} for r in results},
        "targets": [
            t.as_json() | {"benchmark": r.name, "load_average": r.load}
            for r in results
            for t in r.targets
        ],
    }
    print(format_table(results))
    print(f"cores: {cores.describe()}")
    print(format_targets(results))
    print(json.dumps(doc, indent=2))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{stamp}.json").write_text(json.dumps(doc, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
