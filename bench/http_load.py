"""HTTP load: ``wrk`` when it is installed, else a small keep-alive load generator on asyncio.

``post_load(host, port, path, body, seconds=..., connections=...)`` POSTs the same JSON body over
keep-alive connections for ``seconds`` and returns a ``LoadResult`` naming the generator it used.

``wrk`` (Debian's ``wrk`` package: C, epoll, one thread here) costs little CPU per request, so
the server stays the bottleneck; it is given the request by a Lua script written to a temporary
file. Without it, the fallback is an asyncio client on raw streams (httpx would cost more CPU per
request than the routes it measures, and every server would look alike); it needs more CPU than
wrk, so its figures are lower and the ratios closer together: say which one produced a figure.
"""

from __future__ import annotations

import asyncio
import os
import re
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from bench.cores import CoreLayout
from bench.cpu_use import children_cpu, tree_cpu

__all__ = [
    "LoadResult",
    "Rounds",
    "generator",
    "interleaved",
    "paired_ratio",
    "post_load",
]


@dataclass(frozen=True)
class LoadResult:
    requests_per_second: float
    failed: int
    """Answers that were not 2xx, plus socket errors and timeouts."""
    generator: str
    seconds: float
    """How long the load ran (the generator's own measure)."""


def generator() -> str:
    """``wrk`` when it is on the PATH, else ``asyncio``."""
    return "wrk" if shutil.which("wrk") else "asyncio"


def post_load(
    host: str,
    port: int,
    path: str,
    body: bytes,
    *,
    seconds: float,
    connections: int = 16,
    cores: CoreLayout | None = None,
) -> LoadResult:
    """Load ``POST path`` with ``body`` over ``connections`` keep-alive connections, on the
    layout's load cores (``bench.cores``; wrk: one thread per load core, one unpinned)."""
    layout = cores or CoreLayout()
    if generator() == "wrk":
        return _wrk(host, port, path, body, seconds, connections, layout)
    request = _post_request(host, port, path, body)
    pin = layout.pin("load")
    mine = os.sched_getaffinity(0) if pin is not None else None
    try:
        if pin is not None:
            pin()  # the fallback is this process: on the load cores while it loads
        ok, failed, elapsed = asyncio.run(_load(host, port, request, seconds, connections))
    finally:
        if mine is not None:
            os.sched_setaffinity(0, mine)
    return LoadResult(ok / elapsed, failed, "asyncio", elapsed)


@dataclass
class Rounds:
    """What ``interleaved`` measured: each target's requests per second, round by round, the
    failures, and where the target's server pid was given, the CPU each request cost."""

    rates: dict[str, list[float]]
    failed: int = 0
    server_us: dict[str, list[float]] = field(default_factory=dict)
    """CPU µs per request of the server's process tree (its workers included)."""
    generator_us: dict[str, list[float]] = field(default_factory=dict)
    """CPU µs per request of the load generator (wrk; with the asyncio fallback, this process)."""


def interleaved(
    targets: Mapping[str, tuple[int, str, bytes]],
    *,
    rounds: int,
    seconds: float,
    settle: float = 1.0,
    pids: Mapping[str, int] | None = None,
    cores: CoreLayout | None = None,
) -> Rounds:
    """Requests per second of each target ``name -> (port, path, body)`` in every round, and the
    failures. Each target is warmed up for a second, then loaded once per round, in turn, so a
    machine that slows down during the run slows every target alike. ``settle`` seconds pass
    after each load, so a slow server still finishing the requests in flight when the load
    stopped does not take CPU from the next target. For the targets in ``pids`` (name -> the
    server's pid) the CPU the server and the load generator spent per request is measured too.
    The load runs on the layout's load cores (``cores``)."""
    for port, path, body in targets.values():
        post_load("127.0.0.1", port, path, body, seconds=1, cores=cores)
        time.sleep(settle)
    out = Rounds({name: [] for name in targets})
    pids = pids or {}
    for _ in range(rounds):
        for name, (port, path, body) in targets.items():
            pid = pids.get(name)
            server0, generator0 = (tree_cpu(pid), _generator_cpu()) if pid else (0.0, 0.0)
            load = post_load("127.0.0.1", port, path, body, seconds=seconds, cores=cores)
            out.rates[name].append(load.requests_per_second)
            out.failed += load.failed
            if pid:
                requests = load.requests_per_second * load.seconds
                per_request = 1e6 / max(requests, 1.0)
                server = (tree_cpu(pid) - server0) * per_request
                out.server_us.setdefault(name, []).append(server)
                spent = (_generator_cpu() - generator0) * per_request
                out.generator_us.setdefault(name, []).append(spent)
            time.sleep(settle)
    return out


def _generator_cpu() -> float:
    """CPU seconds the load generator has used: wrk runs as a child, the fallback in-process."""
    if generator() == "wrk":
        return children_cpu()
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def paired_ratio(a: list[float], b: list[float]) -> float:
    """The median of ``a / b`` paired round by round (both measured in the same round)."""
    return statistics.median(x / y for x, y in zip(a, b, strict=True))


# -- wrk ------------------------------------------------------------------------------------------


def _lua_string(data: bytes) -> str:
    return '"' + "".join(f"\\{b}" for b in data) + '"'


def _wrk(
    host: str,
    port: int,
    path: str,
    body: bytes,
    seconds: float,
    connections: int,
    layout: CoreLayout,
) -> LoadResult:
    lines = [
        'wrk.method = "POST"',
        f"wrk.body = {_lua_string(body)}",
        'wrk.headers["Content-Type"] = "application/json"',
    ]
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "post.lua"
        script.write_text("\n".join(lines) + "\n")
        duration = max(1, round(seconds))
        out = subprocess.run(
            [
                "wrk",
                f"-t{layout.load_threads(connections)}",
                f"-c{connections}",
                f"-d{duration}s",
                "--timeout",
                "10s",
                "-s",
                str(script),
                f"http://{host}:{port}{path}",
            ],
            capture_output=True,
            text=True,
            check=True,
            timeout=duration + 60,
            preexec_fn=layout.pin("load"),
        ).stdout
    rate = re.search(r"Requests/sec:\s*([\d.]+)", out)
    took = re.search(r"requests in ([\d.]+)(ms|s|m)\b", out)
    if rate is None or took is None:
        raise RuntimeError(f"wrk printed no rate:\n{out}")
    elapsed = float(took.group(1)) * {"ms": 0.001, "s": 1.0, "m": 60.0}[took.group(2)]
    failed = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses:\s*(\d+)", out))
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if errors is not None:
        failed += sum(int(n) for n in errors.groups())
    return LoadResult(float(rate.group(1)), failed, "wrk", elapsed)


# -- the asyncio fallback -------------------------------------------------------------------------


def _post_request(host: str, port: int, path: str, body: bytes) -> bytes:
    return (
        f"POST {path} HTTP/1.1\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode() + body


async def _worker(host: str, port: int, request: bytes, deadline: float, counts: list[int]) -> None:
    reader, writer = await asyncio.open_connection(host, port)
    try:
        while time.perf_counter() < deadline:
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            status = int(head[9:12])
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if length:
                await reader.readexactly(length)
            counts[0 if 200 <= status < 300 else 1] += 1
    finally:
        writer.close()


async def _load(
    host: str, port: int, request: bytes, seconds: float, connections: int
) -> tuple[int, int, float]:
    counts = [0, 0]
    started = time.perf_counter()
    deadline = started + seconds
    await asyncio.gather(
        *(_worker(host, port, request, deadline, counts) for _ in range(connections))
    )
    return counts[0], counts[1], time.perf_counter() - started
