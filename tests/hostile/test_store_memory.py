"""Item 19 of the hardening issue: a client that makes up endless distinct
calls, from endless sessions, must not grow the server's memory without bound."""

from __future__ import annotations

from mock_tools import MockToolService, OccurrenceCounter, load_suite
from mock_tools.service import CallContext
from tests.hostile.conftest import MINI


async def test_19_endless_distinct_misses_keep_occurrence_memory_bounded() -> None:
    service = MockToolService(load_suite(MINI), occurrence_limit=64)
    for n in range(1_000):
        ctx = CallContext(scope=f"session-{n % 37}")
        call = {"parcel_id": f"ZZ-{n}"}  # never recorded
        _, _, outcome = await service.handle("shipping", "track_parcel", call, ctx)
        assert outcome.provenance == "miss"
    assert len(service.attempts) <= 64 and len(service.deliveries) <= 64
    assert service.stats.totals["miss"] == 1_000
    # a recorded call still counts its occurrences within the limit
    ctx = CallContext(scope="fresh")
    for expected in (1, 2, 3):
        _, _, outcome = await service.handle(
            "shipping", "track_parcel", {"parcel_id": "PX-100"}, ctx
        )
        assert outcome.provenance == "hit" and outcome.occurrence == expected


def test_19_the_counter_forgets_least_recently_used_calls_first() -> None:
    counter = OccurrenceCounter(limit=3)
    assert [counter.next("s", "t", "a", k) for k in "xyz"] == [1, 1, 1]
    assert counter.next("s", "t", "a", "x") == 2  # x is now the most recently used
    assert counter.next("s", "t", "a", "w") == 1  # over the limit: y is forgotten
    assert len(counter) == 3
    assert counter.peek("s", "t", "a", "y") == 0 and counter.peek("s", "t", "a", "x") == 2
    assert counter.next("other", "t", "a", "x") == 1  # z goes
    assert counter.scopes() == ["other", "s"]
    assert counter.reset("s") == 1 and counter.scopes() == ["other"] and len(counter) == 1
    assert counter.reset() == 1 and len(counter) == 0
