"""Where the benchmarks' processes run: the servers on some cores, the load generator on others.

``python -m bench --cores LAYOUT`` (``make bench ARGS="--cores LAYOUT"``):

- ``auto`` (the default): on a machine with 4 or more usable cores the load generator (wrk, or
  the asyncio fallback) is pinned to the last quarter of them and the servers to the rest, so
  the servers measured never share a core with the load; with fewer cores nothing is pinned
  (``shared``), as every figure measured on the 2-core machine was.
- ``shared``: nothing pinned.
- ``SERVERS/LOAD``: two CPU lists as ``taskset`` reads them (``0-11/12-15``, ``0,2/1``), disjoint
  and within the cores this process may use.

Pinning is ``sched_setaffinity`` in the child before it runs, so a server's workers and every
thread of wrk inherit it. wrk gets one thread per load core (up to its connections); unpinned it
keeps one. ``layout.as_json()`` is recorded with the figures.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass

__all__ = ["CoreLayout", "available_cores", "cpu_list", "parse_cores"]


def available_cores() -> frozenset[int]:
    """The cores this process may run on."""
    if hasattr(os, "sched_getaffinity"):
        return frozenset(os.sched_getaffinity(0))
    return frozenset(range(os.cpu_count() or 1))


@dataclass(frozen=True)
class CoreLayout:
    """The servers' cores and the load generator's (both None: nothing pinned)."""

    servers: frozenset[int] | None = None
    load: frozenset[int] | None = None
    spec: str = "shared"
    """What was asked (``auto``, ``shared`` or the two lists)."""

    @property
    def pinned(self) -> bool:
        return self.servers is not None and self.load is not None

    def pin(self, role: str) -> Callable[[], None] | None:
        """A ``preexec_fn`` pinning a child to the cores of ``role`` (``servers`` or ``load``),
        None when nothing is pinned."""
        if role not in ("servers", "load"):
            raise ValueError(f"unknown role {role!r}: servers or load")
        cores = self.servers if role == "servers" else self.load
        if cores is None:
            return None
        chosen = sorted(cores)
        return lambda: os.sched_setaffinity(0, chosen)

    def load_threads(self, connections: int) -> int:
        """wrk's threads: one per load core (at most one per connection); 1 unpinned."""
        return max(1, min(len(self.load), connections)) if self.load else 1

    def describe(self) -> str:
        if not self.pinned:
            return f"nothing pinned ({self.spec}): servers and load generator share the cores"
        assert self.servers is not None and self.load is not None
        return f"servers on cores {cpu_list(self.servers)}, load generator on {cpu_list(self.load)}"

    def as_json(self) -> dict[str, object]:
        return {
            "spec": self.spec,
            "servers": sorted(self.servers) if self.servers is not None else None,
            "load": sorted(self.load) if self.load is not None else None,
        }


def cpu_list(cores: Iterable[int]) -> str:
    """``{0, 1, 2, 5}`` -> ``0-2,5``."""
    out: list[str] = []
    run: list[int] = []
    for core in sorted(cores):
        if run and core == run[-1] + 1:
            run.append(core)
            continue
        if run:
            out.append(_span(run))
        run = [core]
    if run:
        out.append(_span(run))
    return ",".join(out)


def _span(run: list[int]) -> str:
    return str(run[0]) if len(run) == 1 else f"{run[0]}-{run[-1]}"


def _read_list(text: str) -> frozenset[int]:
    cores: set[int] = set()
    for part in text.split(","):
        first, sep, last = part.strip().partition("-")
        if not first.isdigit() or (sep and not last.isdigit()):
            raise ValueError(f"{text!r} is not a CPU list (such as 0-11 or 0,2,4)")
        low, high = int(first), int(last) if sep else int(first)
        if high < low:
            raise ValueError(f"{part.strip()!r} counts down")
        cores.update(range(low, high + 1))
    return frozenset(cores)


def parse_cores(spec: str, available: frozenset[int] | None = None) -> CoreLayout:
    """The layout ``spec`` asks for on a machine whose usable cores are ``available``;
    ``ValueError`` saying why when it cannot be had."""
    usable = available_cores() if available is None else available
    if spec == "shared":
        return CoreLayout(spec=spec)
    if spec == "auto":
        if len(usable) < 4:
            return CoreLayout(spec=spec)
        ordered = sorted(usable)
        split = len(ordered) - max(1, len(ordered) // 4)
        return CoreLayout(frozenset(ordered[:split]), frozenset(ordered[split:]), spec)
    servers_text, sep, load_text = spec.partition("/")
    if not sep:
        raise ValueError(f"--cores {spec!r}: auto, shared, or SERVERS/LOAD (such as 0-11/12-15)")
    servers, load = _read_list(servers_text), _read_list(load_text)
    if servers & load:
        raise ValueError(f"--cores {spec!r}: cores {cpu_list(servers & load)} are in both lists")
    missing = (servers | load) - usable
    if missing:
        raise ValueError(
            f"--cores {spec!r}: cores {cpu_list(missing)} are not usable here "
            f"(usable: {cpu_list(usable)})"
        )
    return CoreLayout(servers, load, spec)
