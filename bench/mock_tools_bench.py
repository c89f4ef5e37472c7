"""mock_tools: lookup cost from 1k to 1M recordings.

In-process lookups per second on a ``RecordingStore`` holding 1,000 and 1,000,000 recordings
(pre-canonicalised keys with ``get``, and raw arguments with ``lookup``); the ratio shows whether
lookup stays flat as the store grows. HTTP throughput is the ``http`` benchmark
(``bench.http_bench``).
"""

from __future__ import annotations

import random
import time

from bench.report import BenchResult
from mock_tools import RecordingStore, Response

SCHEMA = {"type": "object", "properties": {"q": {"type": "string"}, "page": {"type": "integer"}}}


def _store(n: int) -> RecordingStore:
    store = RecordingStore(schemas={("search", "web"): SCHEMA})
    for i in range(n):
        body = Response.model_construct(ok=True, body={"rank": i}, error="", latency_ms=0)
        store.add_keyed("search", "web", f'{{"page":{i % 50},"q":"query {i}"}}', body)
    return store


def _lookups_per_second(store: RecordingStore, n: int, calls: int) -> tuple[float, float]:
    rng = random.Random(0)
    picks = [rng.randrange(n) for _ in range(calls)]
    keys = [f'{{"page":{i % 50},"q":"query {i}"}}' for i in picks]
    args = [{"q": f" query {i} ", "page": str(i % 50)} for i in picks]
    get = store.get
    started = time.perf_counter()
    for key in keys:
        if get("search", "web", key) is None:
            raise AssertionError("benchmark key missing")
    get_rate = calls / (time.perf_counter() - started)
    lookup = store.lookup
    started = time.perf_counter()
    for a in args:
        if lookup("search", "web", a) is None:
            raise AssertionError("benchmark args missing")
    return get_rate, calls / (time.perf_counter() - started)


def run(quick: bool = False) -> BenchResult:
    result = BenchResult("mock_tools")
    big = 100_000 if quick else 1_000_000
    calls = 50_000 if quick else 200_000
    rates: dict[tuple[int, str], tuple[float, float]] = {}
    for n in (1_000, big):
        started = time.perf_counter()
        store = _store(n)
        build = time.perf_counter() - started
        result.add(f"store build, {n:,} recordings", build, "s", f"build_seconds_{n}")
        # "hot": the same 1,000 keys for both sizes (algorithmic cost only);
        # "spread": keys drawn from the whole store (adds CPU-cache misses of a big dict)
        for label, space in (("hot", 1_000), ("spread", n)):
            rates[(n, label)] = _lookups_per_second(store, space, calls)
            get_rate, lookup_rate = rates[(n, label)]
            result.add(f"get/s {label}, {n:,}", get_rate, "/s", f"get_{label}_per_second_{n}")
            result.add(
                f"lookup/s {label} (canonicalise), {n:,}",
                lookup_rate,
                "/s",
                f"lookup_{label}_per_second_{n}",
            )
        del store
    for label in ("hot", "spread"):
        small, large = rates[(1_000, label)], rates[(big, label)]
        result.add(
            f"get ratio {label} {big:,}/1,000", large[0] / small[0], "", f"get_ratio_{label}"
        )
        result.add(
            f"lookup ratio {label} {big:,}/1,000", large[1] / small[1], "", f"lookup_ratio_{label}"
        )

    return result
