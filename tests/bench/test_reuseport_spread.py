"""``bench.reuseport_spread``: the connections each ``serve --workers N`` process holds.

What it protects: every connection opened is found on exactly one listening worker (the counts
of a trial sum to the connections), one count per worker, busiest first; so the bench's figure
(the busiest worker's share over the fair one) is a count of what the kernel did.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench.http_bench import write_suite
from bench.http_servers import Server
from bench.reuseport_spread import spread

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_every_connection_is_counted_on_the_one_worker_that_holds_it(tmp_path: Path) -> None:
    suite = write_suite(tmp_path)
    with Server("workers-2", suite) as server:
        shares = spread(server, 2, connections=6, trials=3)
    assert len(shares) == 3
    for counts in shares:
        assert len(counts) == 2 and sum(counts) == 6 and counts == sorted(counts, reverse=True)
