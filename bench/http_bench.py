"""http: the project's hot path against a bare FastAPI route and a raw ASGI app, same stack.

Four targets, each server in its own process (``bench.http_servers``: uvicorn on uvloop +
httptools, 127.0.0.1, one worker, access log off), loaded by ``bench.http_load`` (wrk when
installed: 1 thread x 16 keep-alive connections):

- the project's ``POST /virtual`` answering a recorded hit (StableToolBench's request shape);
- the project's native ``POST /tools/weather/current`` answering the same recorded hit;
- a bare FastAPI route returning the hit's bytes as a constant;
- a raw ASGI app returning the same bytes (the floor of Python HTTP on this machine).

and, for multi-core serving, ``serve --workers 1`` and ``serve --workers 2`` of the same suite
(``/virtual``), the processes ``sandbox serve`` starts, and how much a second busy process adds
on the machine at that time (``bench.cpu_headroom``: the most two workers can gain).

The targets are loaded in interleaved rounds (every target once per round, in turn), so a
machine that slows down during the run slows every target alike; a target's figure is its
median over the rounds, and a ratio is the median of the ratios paired within each round.
Goals (issue 17): project / bare FastAPI >= 1.0 and project / raw ASGI >= 0.5; (issue 29)
project / raw ASGI >= 0.8 (item 7) and two workers / one worker >= 1.6 (item 6). wrk runs on the
same two cores as the servers, so two workers share them with the load generator; on a machine
with the cores, ``--cores`` (``bench.cores``) pins the load generator apart from the servers.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import textwrap
from pathlib import Path

import httpx

from bench.cores import CoreLayout
from bench.cpu_headroom import parallel_speedup
from bench.http_load import Rounds, generator, interleaved, paired_ratio
from bench.http_servers import CONSTANT, HOST, Server, stack
from bench.procs import child_json
from bench.report import BenchResult
from mock_tools import PROVENANCE_HEADER

SUITE = {
    "suite.yaml": "name: bench\n",
    "tools/weather.yaml": textwrap.dedent(
        """
        name: weather
        category: Weather
        apis:
          - name: current
            parameters:
              type: object
              properties: {city: {type: string}, days: {type: integer, default: 1}}
              required: [city]
        """
    ),
    "recordings/r.jsonl": '{"tool":"weather","api":"current","args":{"city":"Oslo"},'
    '"response":{"ok":true,"body":{"temp_c":3,"sky":"snow"}}}\n',
}
VIRTUAL_BODY = json.dumps(
    {
        "category": "Weather",
        "tool_name": "weather",
        "api_name": "current",
        "tool_input": '{"city": "Oslo"}',
        "strip": "",
        "toolbench_key": "",
    }
).encode()
NATIVE_BODY = b'{"city": "Oslo"}'


def write_suite(folder: Path) -> Path:
    for rel, text in SUITE.items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    return folder


def check_hits(port: int) -> None:
    """The project answers both requests with the recorded hit (else the figures mean nothing)."""
    base = f"http://{HOST}:{port}"
    native = httpx.post(f"{base}/tools/weather/current", content=NATIVE_BODY)
    virtual = httpx.post(f"{base}/virtual", content=VIRTUAL_BODY)
    for r in (native, virtual):
        if r.status_code != 200 or r.headers.get(PROVENANCE_HEADER) != "hit":
            raise RuntimeError(f"not a recorded hit: {r.status_code} {r.text[:200]}")
    if native.content != CONSTANT:
        raise RuntimeError(f"the native hit is not the constant servers' body: {native.text}")


_APP_COST = (
    "import json, sys\n"
    "from pathlib import Path\n"
    "from bench.asgi_cost import measure\n"
    "print(json.dumps(measure(Path(sys.argv[1]), rounds=int(sys.argv[2]))))\n"
)


def _app_costs(result: BenchResult, apps: dict[str, float], asgi_rate: float) -> None:
    """Where the hot path's gap to the raw ASGI app is: each app's µs per request in process
    (``bench.asgi_cost``), the server's own µs per request (the anchor's time per request over
    HTTP less its app's), and the ratio those predict."""
    server_us = 1e6 / asgi_rate - apps["asgi"]
    result.add("in process: raw ASGI app", apps["asgi"], "µs/req", "app_us_asgi")
    for name in ("virtual", "native"):
        result.add(f"in process: project {name}", apps[name], "µs/req", f"app_us_{name}")
    result.add("  of which the recording lookup", apps["lookup"], "µs/req", "app_us_lookup")
    result.add("server's own work (HTTP, per request)", server_us, "µs/req", "server_us")
    for name in ("virtual", "native"):
        predicted = (server_us + apps["asgi"]) / (server_us + apps[name])
        result.add(f"ratio {name} / asgi those predict", predicted, "", f"{name}_predicted")


def _app_amplified(result: BenchResult, measured: Rounds, extra: float) -> None:
    """Is the hot path's gap to the raw ASGI app its own in-process µs, or something around it?
    The anchor made to spend the same ``extra`` µs per request as the project's app does in
    process (a busy loop) is loaded beside them: when the project serves as fast as that, its gap
    is the app's own cost; each in-process µs costs more over HTTP than a µs (the server's CPU per
    request grows by ``amplification`` µs per µs), because a slower server gets fewer requests
    per wake-up of the event loop and per socket write, so its per-request transport cost grows."""
    median = statistics.median
    server = {name: median(measured.server_us[name]) for name in ("asgi", "busy", "virtual")}
    result.add(f"busy ASGI app: the anchor + {extra:.2f} µs", extra, "µs/req", "busy_extra_us")
    for name, label in (("asgi", "raw ASGI"), ("busy", "busy ASGI"), ("virtual", "/virtual")):
        result.add(f"CPU per request over HTTP, {label}", server[name], "µs", f"http_us_{name}")
    amplification = (server["busy"] - server["asgi"]) / extra if extra else 0.0
    result.add("server µs per in-process µs", amplification, "", "amplification")
    same_cost = paired_ratio(measured.rates["virtual"], measured.rates["busy"])
    result.add("ratio virtual / busy ASGI app", same_cost, "", "virtual_over_busy")
    result.target("7 hot path: virtual / busy anchor", same_cost, "x", "asgi + app µs")


def _worker_cpu(result: BenchResult, measured: Rounds, headroom: list[float]) -> None:
    """Where the CPU of multi-core serving goes: the servers' and wrk's CPU per request, the
    cores each used, the rate per server core (does a second worker serve as much per core as
    one?), and the ratio the CPU costs allow: with the load generator on the same cores, two
    workers get the machine's cores (``headroom``: 2 when idle) less what wrk spends on their
    requests, so at most ``headroom / ((server + wrk µs per request) * one worker's rate)``."""
    one, two = measured.rates["workers1"], measured.rates["workers2"]
    server1, server2 = measured.server_us["workers1"], measured.server_us["workers2"]
    wrk1, wrk2 = measured.generator_us["workers1"], measured.generator_us["workers2"]
    median = statistics.median
    result.add("CPU per request, server, --workers 1", median(server1), "µs", "workers1_server_us")
    result.add("CPU per request, server, --workers 2", median(server2), "µs", "workers2_server_us")
    result.add("CPU per request, load generator", median(wrk1 + wrk2), "µs", "generator_us")
    cores = {
        "server at --workers 1": [r * c / 1e6 for r, c in zip(one, server1, strict=True)],
        "server at --workers 2": [r * c / 1e6 for r, c in zip(two, server2, strict=True)],
        "load generator at --workers 2": [r * c / 1e6 for r, c in zip(two, wrk2, strict=True)],
    }
    for label, used in cores.items():
        key = "cores_" + label.replace(" at --workers ", "_w").replace(" ", "_")
        result.add(f"cores used, {label}", median(used), "", key)
    per_core = median(a / b for a, b in zip(server1, server2, strict=True))
    result.add("rate per server core, --workers 2 / --workers 1", per_core, "", "per_core_ratio")
    allowed = median(
        spare / ((s + g) / 1e6) / r
        for spare, s, g, r in zip(headroom, server2, wrk2, one, strict=True)
    )
    result.add("ratio --workers 2 / 1 the CPU costs allow", allowed, "", "workers2_allowed")
    result.target("6 ceiling beside wrk on these cores", allowed, "x", "--workers 1")


def run(quick: bool = False, cores: CoreLayout | None = None) -> BenchResult:
    layout = cores or CoreLayout()
    result = BenchResult("http")
    rounds, seconds = (2, 1.0) if quick else (5, 4.0)
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp))
        apps = child_json(_APP_COST, suite, 3 if quick else 7)
        extra = max(apps["virtual"] - apps["asgi"], 0.0)
        with (
            Server("project", suite, layout) as project,
            Server("fastapi", cores=layout) as bare,
            Server("asgi", cores=layout) as raw,
            Server(f"asgi+{extra:.2f}", cores=layout) as busy,
            Server("workers-1", suite, layout) as one,
            Server("workers-2", suite, layout) as two,
        ):
            for server in (project, one, two):
                check_hits(server.port)
            targets = {
                "virtual": (project.port, "/virtual", VIRTUAL_BODY),
                "native": (project.port, "/tools/weather/current", NATIVE_BODY),
                "fastapi": (bare.port, "/const", NATIVE_BODY),
                "asgi": (raw.port, "/", NATIVE_BODY),
                "busy": (busy.port, "/", NATIVE_BODY),
                "workers1": (one.port, "/virtual", VIRTUAL_BODY),
                "workers2": (two.port, "/virtual", VIRTUAL_BODY),
            }
            servers = {"virtual": project, "asgi": raw, "busy": busy, "workers1": one}
            pids = {name: server.pid for name, server in {**servers, "workers2": two}.items()}
            measured = interleaved(targets, rounds=rounds, seconds=seconds, pids=pids, cores=layout)
            headroom = [parallel_speedup(seconds / 2) for _ in range(rounds)]
        apps = child_json(_APP_COST, suite, 3 if quick else 7)
    rates, failed = measured.rates, measured.failed
    labels = {
        "virtual": "project POST /virtual (hit)",
        "native": "project POST /tools/{tool}/{api} (hit)",
        "fastapi": "bare FastAPI route (constant)",
        "asgi": "raw ASGI app (constant)",
        "busy": f"raw ASGI app + {extra:.2f} µs busy",
        "workers1": "serve --workers 1, POST /virtual",
        "workers2": "serve --workers 2, POST /virtual",
    }
    for name, label in labels.items():
        result.add(f"req/s, {label}", statistics.median(rates[name]), "/s", f"{name}_per_second")
    for project in ("virtual", "native"):
        for base in ("fastapi", "asgi"):
            result.add(
                f"ratio {project} / {base}",
                paired_ratio(rates[project], rates[base]),
                "",
                f"{project}_over_{base}",
            )
    _app_costs(result, apps, statistics.median(rates["asgi"]))
    workers = paired_ratio(rates["workers2"], rates["workers1"])
    result.add("ratio serve --workers 2 / --workers 1", workers, "", "workers2_over_workers1")
    spare = statistics.median(headroom)
    result.add("two busy processes / one (the machine now)", spare, "", "cpu_headroom")
    for project in ("virtual", "native"):
        ratio = paired_ratio(rates[project], rates["asgi"])
        result.target(f"7 hot path: {project}", ratio, "x", "raw ASGI app", at_least=0.8)
    result.target("6 serve --workers 2", workers, "x", "--workers 1", at_least=1.6)
    result.target("6 machine: 2 busy processes", spare, "x", "1 busy process")
    _worker_cpu(result, measured, headroom)
    _app_amplified(result, measured, extra)
    result.figures.update(
        generator=generator(),
        **stack(),
        rounds=rounds,
        seconds_per_round=seconds,
        connections=16,
        failed=failed,
        cores=layout.as_json(),
    )
    threads = layout.load_threads(16) if generator() == "wrk" else 1
    result.rows.append(
        ("load generator", f"{generator()} x{threads}, {rounds} x {seconds:g} s, 16 conns")
    )
    result.rows.append(("cores", layout.describe()))
    return result
