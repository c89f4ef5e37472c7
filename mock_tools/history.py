"""Write histories: what a recorded stateful system had been told before a call.

A live stateful system (an MCP server whose writes change what later reads return) recorded once
replays offline when each answer is kept under the call *and* the write calls its session made
before it, in order: a read after ``add_todo("milk")`` is another call than the same read before
it. Reads do not move the history, so an agent that reads in another order stays on it.

- ``extend(history, tool, api, key)``: the history after one more write call (a chained SHA-256
  of the calls, so it costs the same whatever the history's length). ``None`` is the empty
  history: every recording of a suite without writes has it, so such suites are unchanged.
- ``api_kinds(meta, apis)``: which APIs write. A name listed in ``SuiteMeta.writes`` writes, one
  in ``reads`` reads; otherwise the API's ``read_only`` (MCP's ``readOnlyHint``) decides; an API
  nothing speaks of writes when the suite lists its ``reads`` (the others are writes), else it
  reads (as every API did before).
- ``WriteHistories``: each session's current history in a server (at most ``limit`` sessions,
  the least recently used forgotten).

Imports ``mock_tools.models`` and ``names`` only.
"""

from __future__ import annotations

import hashlib
import json
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from mock_tools.models import ApiSpec, SuiteMeta
from mock_tools.names import function_name

__all__ = [
    "HISTORY_CHARS",
    "MAX_HISTORIES",
    "WriteHistories",
    "api_kinds",
    "extend",
    "history_of",
    "write_apis",
]

Pair = tuple[str, str]

HISTORY_CHARS = 32
"""Hex digits kept of a history's SHA-256 (128 bits)."""

MAX_HISTORIES = 100_000
"""How many sessions' histories a server keeps by default."""


def extend(history: str | None, tool: str, api: str, key: str) -> str:
    """The history after the write call ``tool/api`` with canonical arguments ``key``."""
    call = json.dumps([tool, api, key], ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256((history or "").encode("ascii"))
    digest.update(b"\n")
    digest.update(call.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()[:HISTORY_CHARS]


def history_of(writes: Iterable[tuple[str, str, str]]) -> str | None:
    """The history after these write calls ``(tool, api, canonical key)``, in order."""
    history: str | None = None
    for tool, api, key in writes:
        history = extend(history, tool, api, key)
    return history


def api_kinds(meta: SuiteMeta, apis: Mapping[Pair, ApiSpec]) -> dict[Pair, bool | None]:
    """Per API: True for a write, False for a read, None when nothing says (a read). A name
    of ``writes`` or ``reads`` that is no API, or an API in both, is a ``ValueError``."""
    writes = _resolve(meta.writes or [], apis, "writes")
    reads = _resolve(meta.reads or [], apis, "reads")
    both = sorted(writes & reads)
    if both:
        tool, api = both[0]
        raise ValueError(f"{tool}/{api} is listed in both writes and reads")
    unsaid = True if meta.reads is not None else False if meta.writes is not None else None
    kinds: dict[Pair, bool | None] = {}
    for pair, spec in apis.items():
        if pair in writes:
            kinds[pair] = True
        elif pair in reads:
            kinds[pair] = False
        elif spec.read_only is not None:
            kinds[pair] = not spec.read_only
        else:
            kinds[pair] = unsaid
    return kinds


def write_apis(meta: SuiteMeta, apis: Mapping[Pair, ApiSpec]) -> frozenset[Pair]:
    """The APIs that write (``api_kinds``)."""
    return frozenset(pair for pair, writes in api_kinds(meta, apis).items() if writes)


def _resolve(names: Iterable[str], apis: Mapping[Pair, ApiSpec], field: str) -> set[Pair]:
    """The APIs ``names`` stand for: ``tool/api``, ``tool/*`` or a function name."""
    by_path = {f"{tool}/{api}": (tool, api) for tool, api in apis}
    by_function = {spec.function or function_name(*pair): pair for pair, spec in apis.items()}
    out: set[Pair] = set()
    for name in names:
        pair = by_path.get(name) or by_function.get(name)
        if pair is not None:
            out.add(pair)
            continue
        tool = name[:-2] if name.endswith("/*") else None
        every = [p for p in apis if p[0] == tool]
        if not every:
            raise ValueError(
                f"{field}: {name!r} names no API of the suite (tool/api, tool/* or a function name)"
            )
        out.update(every)
    return out


class WriteHistories:
    """Each session's current write history (sessions named by their occurrence scope)."""

    def __init__(self, limit: int = MAX_HISTORIES) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._current: OrderedDict[str, str] = OrderedDict()

    def current(self, scope: str) -> str | None:
        """The session's history (None: no write yet)."""
        return self._current.get(scope)

    def advance(self, scope: str, tool: str, api: str, key: str) -> str:
        """Add one write call to the session's history; the history after it."""
        history = extend(self._current.get(scope), tool, api, key)
        self._current[scope] = history
        self._current.move_to_end(scope)
        if len(self._current) > self.limit:
            self._current.popitem(last=False)
        return history

    def reset(self, scope: str | None = None) -> int:
        """Forget one session's history (all without a name); how many were dropped."""
        if scope is None:
            n = len(self._current)
            self._current.clear()
            return n
        return 1 if self._current.pop(scope, None) is not None else 0

    def __len__(self) -> int:
        return len(self._current)
