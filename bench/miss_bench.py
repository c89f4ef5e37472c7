"""misses: the mock server's memory over endless distinct misses (hardening issue, item 19).

A client that makes up a new call every time (a fuzzer, a model that invents ids) must not grow
the server without bound: occurrence counts are kept for at most ``MAX_COUNTED_CALLS`` calls and
the service's memos are bounded. In a fresh subprocess, the service of a small suite answers
1,000,000 distinct calls that miss (``--quick``: 200,000) through its call path (``handle``, with
the ``error`` miss policy), spread over 1,000 sessions, and the process's resident memory is
read at each quarter. The figure is the growth over the second half: flat means about 0 MiB.
"""

from __future__ import annotations

import textwrap

from bench.procs import ROOT, child_json
from bench.report import BenchResult

_CHILD = textwrap.dedent(
    """
    import asyncio, json, sys
    from mock_tools import MockToolService, load_suite
    from mock_tools.service import CallContext

    def rss_mib() -> float:
        with open("/proc/self/statm") as f:
            pages = int(f.read().split()[1])
        import os
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20

    async def main(total: int) -> list[tuple[int, float]]:
        service = MockToolService(load_suite(sys.argv[2]))
        contexts = [CallContext(scope=f"session-{i}") for i in range(1000)]
        marks, out = {total * q // 4 for q in (1, 2, 3, 4)}, []
        for n in range(1, total + 1):
            args = {"parcel_id": f"ZZ-{n}"}
            ctx = contexts[n % 1000]
            _, _, outcome = await service.handle("shipping", "track_parcel", args, ctx)
            if outcome.provenance != "miss":
                raise AssertionError(outcome.provenance)
            if n in marks:
                out.append((n, rss_mib()))
        return out

    print(json.dumps(asyncio.run(main(int(sys.argv[1])))))
    """
)


def run(quick: bool) -> BenchResult:
    total = 200_000 if quick else 1_000_000
    suite = ROOT / "tests" / "fixtures" / "suites" / "mini"
    marks = child_json(_CHILD, total, suite)
    result = BenchResult("misses")
    for n, rss in marks:
        result.add(f"resident after {n:,} distinct misses", rss, "MiB", f"rss_mib_{n}")
    half, whole = marks[1][1], marks[-1][1]
    result.add(
        f"growth from {marks[1][0]:,} to {marks[-1][0]:,} misses", whole - half, "MiB", "growth_mib"
    )
    return result
