"""stb: the project against StableToolBench's server on the same cache, at 10 and 10,000 entries.

A StableToolBench cache is generated in its layout (``<cache>/Data/geo_lookup_for_Data/
get_city.json``, mapping ``str(args)`` to ``{"error": "", "response": ...}``, each response a
few hundred bytes) with 10 and with 10,000 entries for one API, and imported into a suite with the
project's ``sandbox import stb-cache``. Four servers, each in its own process on the same stack
(``bench.http_servers``: uvicorn on uvloop + httptools, access log off): the project's app on each
suite and the peer (``bench.stb_peer``, a re-implementation of StableToolBench's cache lookup,
which reads and parses the API's cache file on every request) on each cache. Every server gets
the same ``POST /virtual`` request for a cached call, in interleaved rounds (``bench.http_load``,
wrk when installed, 1 thread x 16 connections); a figure is the median over the rounds.

Goals (issue 17): project / peer >= 200x at 10,000 entries, and the project's throughput constant
in cache size (project at 10,000 / project at 10 near 1).
"""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from bench.cores import CoreLayout
from bench.http_load import generator, interleaved, paired_ratio
from bench.http_servers import HOST, Server
from bench.procs import ROOT
from bench.report import BenchResult
from mock_tools import PROVENANCE_HEADER

SIZES = (10, 10_000)
CATEGORY, TOOL, API = "Data", "geo_lookup", "get_city"
_WORDS = (
    "clear skies with a light breeze from the north and mild temperatures through the afternoon, "
    "turning cloudy by evening with a chance of drizzle along the coast and fog in the valleys"
)


def _letters(i: int) -> str:
    out = ""
    while True:
        i, r = divmod(i, 26)
        out = chr(ord("a") + r) + out
        if i == 0:
            return out


def _args(i: int) -> dict[str, object]:
    return {"city": f"city {_letters(i)}", "page": i % 7}


def write_cache(folder: Path, n: int) -> Path:
    """A StableToolBench cache of ``n`` entries for one API (responses free of the words that
    make StableToolBench treat a cached answer as a miss, so the import keeps them all)."""
    table = {
        str(_args(i)): {
            "error": "",
            "response": {"name": f"City {_letters(i)}", "summary": _WORDS, "source": "bench"},
        }
        for i in range(n)
    }
    path = folder / CATEGORY / f"{TOOL}_for_{CATEGORY}" / f"{API}.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(table, indent=4))
    return folder


def import_cache(cache: Path, suite: Path, n: int) -> None:
    """``sandbox import stb-cache CACHE --out SUITE``; checks every entry became a recording."""
    out = subprocess.run(
        [sys.executable, "-m", "sandbox", "import", "stb-cache", str(cache), "--out", str(suite)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    written = json.loads(out)["written"]["recordings"]
    if written != n:
        raise RuntimeError(f"the import wrote {written} recordings of {n}")


def request_body(n: int) -> bytes:
    """A cached call from the middle of the cache, as a StableToolBench client sends it."""
    return json.dumps(
        {
            "category": CATEGORY,
            "tool_name": TOOL,
            "api_name": API,
            "tool_input": json.dumps(_args(n // 2)),
            "strip": "",
            "toolbench_key": "",
        }
    ).encode()


def _check(port: int, body: bytes, project: bool) -> None:
    r = httpx.post(
        f"http://{HOST}:{port}/virtual",
        content=body,
        headers={"Content-Type": "application/json"},
        timeout=60,
    )
    answer = r.json()
    if r.status_code != 200 or answer.get("error") or not answer.get("response"):
        raise RuntimeError(f"not a cached answer: {r.status_code} {r.text[:200]}")
    if project and r.headers.get(PROVENANCE_HEADER) != "hit":
        raise RuntimeError(f"the project did not answer from its recordings: {r.text[:200]}")


def run(quick: bool = False, cores: CoreLayout | None = None) -> BenchResult:
    layout = cores or CoreLayout()
    result = BenchResult("stb")
    rounds, seconds = (2, 1.0) if quick else (5, 3.0)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bodies = {n: request_body(n) for n in SIZES}
        with contextlib.ExitStack() as stack:
            ports: dict[str, int] = {}
            for n in SIZES:
                cache = write_cache(root / f"cache-{n}", n)
                suite = root / f"suite-{n}"
                import_cache(cache, suite, n)
                project = Server("project", suite, layout)
                ports[f"project_{n}"] = stack.enter_context(project).port
                ports[f"peer_{n}"] = stack.enter_context(Server("stb-peer", cache, layout)).port
            targets = {
                name: (port, "/virtual", bodies[int(name.rsplit("_", 1)[1])])
                for name, port in ports.items()
            }
            for name, (port, _, body) in targets.items():
                _check(port, body, name.startswith("project"))
            measured = interleaved(targets, rounds=rounds, seconds=seconds, cores=layout)
    rates, failed = measured.rates, measured.failed
    for n in SIZES:
        result.add(
            f"req/s, project /virtual, {n:,} entries",
            statistics.median(rates[f"project_{n}"]),
            "/s",
            f"project_per_second_{n}",
        )
        result.add(
            f"req/s, StableToolBench peer, {n:,} entries",
            statistics.median(rates[f"peer_{n}"]),
            "/s",
            f"peer_per_second_{n}",
        )
    for n in SIZES:
        result.add(
            f"ratio project / peer, {n:,} entries",
            paired_ratio(rates[f"project_{n}"], rates[f"peer_{n}"]),
            "x",
            f"project_over_peer_{n}",
        )
    small, large = SIZES
    result.add(
        f"ratio project {large:,} / {small:,} entries",
        paired_ratio(rates[f"project_{large}"], rates[f"project_{small}"]),
        "",
        "project_size_ratio",
    )
    result.figures.update(
        generator=generator(), rounds=rounds, seconds_per_round=seconds, failed=failed
    )
    result.rows.append(("load generator", f"{generator()}, {rounds} x {seconds:g} s, 16 conns"))
    result.rows.append(("cores", layout.describe()))
    return result
