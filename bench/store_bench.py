"""store: the compact recording store at 1k, 100k and 1M recordings (``--quick``: 1k, 20k, 100k).

Each size is a generated suite folder (one API, ``{q: string, page: integer}``, a ~200-byte
JSONL line per recording, as an imported cache would be), measured in fresh subprocesses:

1. Ready to serve: ``load_suite`` + ``RecordingStore.from_suite`` + one lookup, cold (no cached
   index: fingerprint, parse, canonicalise, hash, sort and write it; median and best of three,
   the machine is shared) and warm (the cached index opened; median of five).
2. Resident bytes per recording: the process's RSS after the warm open (and after 20,000
   lookups of spread keys) minus its RSS before ``load_suite``, over the number of recordings;
   and per recording between the smallest and the largest suite (the fixed cost of the loaded
   catalog and models taken out: what one more recording costs).
3. Lookups per second of the largest suite against the 1k one, both open in one process, in
   interleaved rounds (the median counts): the same 1,000 keys (recorded in both suites; served
   from the decoded-response cache in both), and spread keys (drawn over the whole suite, with
   the response cache off so every lookup reads and decodes its line). The ratio largest / 1k
   is the figure (goal >= 0.9).
"""

from __future__ import annotations

import json
import statistics
import tempfile
import textwrap
from pathlib import Path

from bench.procs import child_json
from bench.report import BenchResult

TOOL = textwrap.dedent(
    """
    name: search
    apis:
      - name: web
        parameters:
          type: object
          properties: {q: {type: string}, page: {type: integer}}
          required: [q]
    """
)

_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    from pathlib import Path

    def rss() -> int:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    from mock_tools import RecordingStore, load_suite
    from mock_tools.canonical import dumps_canonical

    suite_dir, spread = Path(sys.argv[1]), int(sys.argv[2])
    before = rss()
    started = time.perf_counter()
    suite = load_suite(suite_dir)
    store = RecordingStore.from_suite(suite)
    assert store.lookup("search", "web", {"q": "query 0", "page": 0}) is not None
    ready = time.perf_counter() - started
    opened = rss() - before
    n = len(store)
    step = max(1, n // spread) if spread else 1
    for i in range(0, n, step):
        key = dumps_canonical({"page": i % 50, "q": f"query {i}"})
        assert store.get("search", "web", key) is not None
    print(json.dumps({"ready": ready, "opened": opened, "touched": rss() - before, "n": n}))
    """
)

_LOOKUPS = textwrap.dedent(
    """
    import json, random, statistics, sys, time
    from pathlib import Path

    from mock_tools import RecordingStore, load_suite
    from mock_tools.canonical import dumps_canonical
    from mock_tools.recording_index import IndexedRecordings, open_index

    small_dir, big_dir = Path(sys.argv[1]), Path(sys.argv[2])
    calls, rounds = int(sys.argv[3]), int(sys.argv[4])

    def store(path: Path, cache_size: int) -> RecordingStore:
        suite = load_suite(path)
        assert isinstance(suite.recordings, IndexedRecordings)
        schemas = {pair: spec.parameters for pair, spec in suite.apis.items()}
        index = open_index(path, suite.fingerprint, schemas, cache_size=cache_size)
        return RecordingStore(schemas=schemas, index=index)

    def keys(n: int, count: int, seed: int) -> list[str]:
        rng = random.Random(seed)
        return [dumps_canonical({"page": i % 50, "q": f"query {i}"})
                for i in (rng.randrange(n) for _ in range(count))]

    def rate(s: RecordingStore, ks: list[str]) -> float:
        get = s.get
        started = time.perf_counter()
        for k in ks:
            if get("search", "web", k) is None:
                raise AssertionError("benchmark key missing")
        return len(ks) / (time.perf_counter() - started)

    cached = {"small": store(small_dir, 1024), "big": store(big_dir, 1024)}
    uncached = {"small": store(small_dir, 0), "big": store(big_dir, 0)}
    same = keys(1000, calls, 1)
    for s in cached.values():
        rate(s, same)  # warm the response cache: the same keys are hot in both
    out = {"same_small": [], "same_big": [], "spread_small": [], "spread_big": []}
    for r in range(rounds):  # interleaved, each round in the other order: drift cancels out
        for size in ("small", "big") if r % 2 == 0 else ("big", "small"):
            out[f"same_{size}"].append(rate(cached[size], same))
            n = len(uncached[size])
            out[f"spread_{size}"].append(rate(uncached[size], keys(n, calls, 100 + r)))
    # The memory a spread lookup touches, without its work: two 32-byte reads at random places
    # of the index (bucket, entry) and a pread of a random ~200-byte line of the JSONL file.
    import mmap, os

    def probe_rate(folder: Path, count: int, seed: int) -> float:
        index_path = load_suite(folder).recordings.recording_index.path
        jsonl = next((folder / "recordings").glob("*.jsonl"))
        with open(index_path, "rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        fd = os.open(jsonl, os.O_RDONLY)
        size, lines = len(data) - 32, os.fstat(fd).st_size - 256
        rng = random.Random(seed)
        places = [(rng.randrange(size), rng.randrange(size), rng.randrange(lines))
                  for _ in range(count)]
        pread = os.pread
        started = time.perf_counter()
        for a, b, c in places:
            data[a:a + 32]
            data[b:b + 32]
            pread(fd, 200, c)
        took = time.perf_counter() - started
        os.close(fd)
        data.close()
        return count / took

    for r in range(rounds):
        for size in ("small", "big") if r % 2 == 0 else ("big", "small"):
            folder = small_dir if size == "small" else big_dir
            out.setdefault(f"probe_{size}", []).append(probe_rate(folder, calls, r))
    print(json.dumps({k: statistics.median(v) for k, v in out.items()}))
    """
)


def _write_suite(root: Path, n: int) -> Path:
    (root / "tools").mkdir(parents=True, exist_ok=True)
    (root / "recordings").mkdir(exist_ok=True)
    (root / "suite.yaml").write_text(f"name: store-bench-{n}\n")
    (root / "tools" / "search.yaml").write_text(TOOL)
    with (root / "recordings" / "search.jsonl").open("w") as fh:
        for i in range(n):
            line = {
                "tool": "search",
                "api": "web",
                "args": {"q": f"query {i}", "page": i % 50},
                "response": {
                    "ok": True,
                    "body": {"rank": i, "title": f"result {i}", "url": f"https://example.org/{i}"},
                    "latency_ms": 12,
                },
            }
            fh.write(json.dumps(line, separators=(",", ":")) + "\n")
    return root


def _clear_cache(root: Path) -> None:
    for f in (root / ".cache").glob("*.idx"):
        f.unlink()


def run(quick: bool) -> BenchResult:
    sizes = [1_000, 20_000, 100_000] if quick else [1_000, 100_000, 1_000_000]
    rounds = 3 if quick else 5
    result = BenchResult("store")
    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp:
        dirs = {n: _write_suite(Path(tmp) / f"s{n}", n) for n in sizes}
        largest = sizes[-1]
        colds: list[float] = []
        for _ in range(2 if quick else 3):  # the best cold build of a few (the box is shared)
            _clear_cache(dirs[largest])
            colds.append(child_json(_CHILD, dirs[largest], 0)["ready"])
        opened: dict[int, float] = {}
        for n in sizes:
            if n != largest:
                child_json(_CHILD, dirs[n], 0)  # build its index
            warm = [
                child_json(_CHILD, dirs[n], 20_000) for _ in range(rounds if n == largest else 1)
            ]
            opened[n] = warm[0]["opened"]
            result.add(f"resident after open, {n:,}", opened[n] / n, "B/rec", f"rss_open_{n}")
            touched = warm[0]["touched"] / n
            result.add(f"resident after 20k lookups, {n:,}", touched, "B/rec", f"rss_touched_{n}")
            if n == largest:
                ready = statistics.median(x["ready"] for x in warm)
        small = sizes[0]
        marginal = (opened[largest] - opened[small]) / (largest - small)
        result.add(
            f"resident per recording, {small:,} -> {largest:,}", marginal, "B/rec", "rss_marginal"
        )
        result.add(
            f"ready to serve {largest:,}, cold (median)",
            statistics.median(colds),
            "s",
            "ready_cold",
        )
        result.add(f"ready to serve {largest:,}, cold (best)", min(colds), "s", "ready_cold_best")
        result.add(f"ready to serve {largest:,}, warm open", ready, "s", "ready_warm")
        rates = child_json(_LOOKUPS, dirs[small], dirs[largest], 10_000, 9 if quick else 21)
    big = f"{largest // 1000:,}k"
    for kind in ("same", "spread"):
        result.add(f"lookups/s, {kind} keys, 1k", rates[f"{kind}_small"], "/s", f"{kind}_1k")
        result.add(f"lookups/s, {kind} keys, {big}", rates[f"{kind}_big"], "/s", f"{kind}_big")
        ratio = rates[f"{kind}_big"] / rates[f"{kind}_small"]
        result.add(f"ratio {kind} keys {big} / 1k (goal >= 0.9)", ratio, "x", f"{kind}_ratio")
        if kind == "spread":
            result.target(f"8 spread-key lookups, {big}", ratio, "x", "1k recordings", at_least=0.9)
    _memory_share(result, rates, big)
    return result


def _memory_share(result: BenchResult, rates: dict[str, float], big: str) -> None:
    """How much of the spread-key gap (µs a lookup takes more at the largest size than at 1k)
    the memory it touches explains: the same reads at random places without the lookup's work
    (the probe), timed at both sizes."""
    us = {k: 1e6 / v for k, v in rates.items()}
    gap = us["spread_big"] - us["spread_small"]
    probe_gap = us["probe_big"] - us["probe_small"]
    result.add("spread lookup, 1k", us["spread_small"], "µs", "spread_us_1k")
    result.add(f"spread lookup, {big}", us["spread_big"], "µs", "spread_us_big")
    result.add(
        "memory probe (2 index reads, 1 line pread), 1k", us["probe_small"], "µs", "probe_1k"
    )
    result.add(f"memory probe, {big}", us["probe_big"], "µs", "probe_big")
    result.add(f"gap {big} - 1k: lookup", gap, "µs", "spread_gap_us")
    result.add(f"gap {big} - 1k: memory probe", probe_gap, "µs", "probe_gap_us")
    share = probe_gap / gap if gap > 0 else 0.0
    result.add("share of the lookup gap the probe explains", share, "x", "memory_share")
    result.target("8 lookup gap the memory probe explains", share, "x", "lookup gap")
