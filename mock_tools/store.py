"""The recording store: recorded responses indexed by canonical key, plus occurrence counters.

``RecordingStore`` answers from a suite folder's recording index (``recording_index``: the JSONL
lines are not decoded until one is served) and from dicts of decoded recordings (recordings given
as objects, responses added at run time). A lookup is a hash probe on ``(tool, api,
canonical_key)`` followed by a small per-key choice of occurrence, so its cost does not depend on
how many recordings there are.

Occurrences: a recording with ``occurrence=n`` answers the nth identical call; one without an
occurrence answers every call that has no recording of its own; a call beyond the last recorded
occurrence gets the last one. Scoped recordings (``Recording.scope``) answer only calls made in
their scope, before the unscoped ones (an imported episode's own responses where episodes saw
different ones); a scope with no recording of a call falls back to the unscoped recordings.
Recordings with a write history (``Recording.history``) answer only calls made after the same
writes (``mock_tools.history``); there is no falling back across histories: a call after other
writes than any recorded is a miss.
Counting identical calls is the job of ``OccurrenceCounter``, which keeps separate counts per
occurrence scope (a session or scenario), so every episode starts at occurrence 1; it keeps at most
``MAX_COUNTED_CALLS`` counts, forgetting the least recently used.

``RecordingWriter`` appends recordings made at runtime (simulated or upstream responses) to a JSONL
file: each line is written with one ``write`` on an ``O_APPEND`` descriptor, then fsynced, under a
lock; a short write is rolled back, and a torn tail left by an earlier crash is cut on open.
Imports ``mock_tools.canonical``, ``models``, ``recording_index`` and ``errors`` only.
"""

from __future__ import annotations

import json
import logging
import os
import threading
from collections import Counter, OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mock_tools.canonical import canonical_key
from mock_tools.errors import MockToolsError
from mock_tools.models import Recording, Response
from mock_tools.recording_index import IndexedRecordings, RecordingIndex, chosen_occurrence

__all__ = ["MAX_COUNTED_CALLS", "OccurrenceCounter", "Place", "RecordingStore", "RecordingWriter"]

log = logging.getLogger(__name__)

SchemaOf = Callable[[str, str], "dict[str, Any] | None"]
Place = tuple[str | None, str, str, str, int, str | None]
"""Where a response is recorded: scope (None: unscoped), tool, api, canonical key, recorded
occurrence (0: every one), write history (None: the empty one)."""


class _Slot:
    """The responses recorded for one canonical call, by occurrence (0: every occurrence)."""

    __slots__ = ("table",)

    def __init__(self) -> None:
        self.table: dict[int, Response] = {}

    def put(self, response: Response, occurrence: int | None) -> bool:
        """Store a response; False when that occurrence already has one (first one wins)."""
        n = occurrence or 0
        if n in self.table:
            return False
        self.table[n] = response
        return True

    def pick(self, occurrence: int) -> tuple[Response, int]:
        """The response for the nth identical call and the occurrence it was recorded for
        (0: the recording without an occurrence)."""
        n = chosen_occurrence(self.table.keys(), occurrence)
        return self.table[n], n


class RecordingStore:
    """Index ``(tool, api, canonical_key) -> responses by occurrence``.

    ``schemas`` maps ``(tool, api)`` to the API's JSON Schema, used to canonicalise arguments;
    recordings of an API missing from it are keyed without a schema. With ``index`` (a suite
    folder's ``RecordingIndex``) the suite's recordings are looked up there, undecoded; what is
    added afterwards (responses made at run time) is kept in memory beside it.
    """

    def __init__(
        self,
        recordings: Iterable[Recording] = (),
        *,
        schemas: Mapping[tuple[str, str], dict[str, Any]] | None = None,
        index: RecordingIndex | None = None,
    ) -> None:
        self._schemas = dict(schemas or {})
        self._index = index
        self._slots: dict[tuple[str, str, str], _Slot] = {}
        self._scoped: dict[tuple[str | None, str | None, str, str, str], _Slot] = {}
        """Responses with a scope or a history: by (scope, history, tool, api, key)."""
        self._keys: dict[tuple[str, str], list[str]] = {}
        self._duplicates: list[tuple[str, str, str, int | None]] = []
        self._count = 0
        for rec in recordings:
            self.add(rec)

    @classmethod
    def from_suite(cls, suite: Any) -> RecordingStore:
        """Build from a loaded ``Suite`` (its recordings, keyed with its API schemas); a suite
        folder's recordings are served from its index without being decoded."""
        schemas = {pair: spec.parameters for pair, spec in suite.apis.items()}
        if isinstance(suite.recordings, IndexedRecordings):
            return cls(schemas=schemas, index=suite.recordings.recording_index)
        return cls(suite.recordings, schemas=schemas)

    def __len__(self) -> int:
        return self._count + (self._index.entries if self._index is not None else 0)

    @property
    def duplicates(self) -> list[tuple[str, str, str, int | None]]:
        """Calls (with their occurrence) recorded more than once; the first one is served."""
        found: list[tuple[str, str, str, int | None]] = []
        if self._index is not None:
            for rec in self._index.duplicates():
                found.append(
                    (rec.tool, rec.api, self.key(rec.tool, rec.api, rec.args), rec.occurrence)
                )
        return found + self._duplicates

    def schema(self, tool: str, api: str) -> dict[str, Any] | None:
        return self._schemas.get((tool, api))

    def key(self, tool: str, api: str, args: Mapping[str, Any] | None) -> str:
        """The canonical key of ``args`` under the API's schema."""
        return canonical_key(dict(args or {}), self._schemas.get((tool, api)))

    def add(self, recording: Recording) -> str:
        """Index a recording and return its canonical key. A duplicate keeps the first one."""
        key = self.key(recording.tool, recording.api, recording.args)
        self.add_keyed(
            recording.tool,
            recording.api,
            key,
            recording.response,
            recording.occurrence,
            scope=recording.scope,
            history=recording.history,
        )
        return key

    def add_keyed(
        self,
        tool: str,
        api: str,
        key: str,
        response: Response,
        occurrence: int | None = None,
        *,
        scope: str | None = None,
        history: str | None = None,
    ) -> bool:
        """Index a response under an already canonical key; False for a duplicate."""
        if self._index is not None and self._index.has(scope, tool, api, key, history):
            self._duplicates.append((tool, api, key, occurrence))
            return False
        if scope is not None or history is not None:
            slot = self._scoped.setdefault((scope, history, tool, api, key), _Slot())
        else:
            found = self._slots.get((tool, api, key))
            if found is None:
                found = self._slots[(tool, api, key)] = _Slot()
                self._keys.setdefault((tool, api), []).append(key)
            slot = found
        if not slot.put(response, occurrence):
            self._duplicates.append((tool, api, key, occurrence))
            return False
        self._count += 1
        return True

    def _slot(
        self, tool: str, api: str, key: str, scope: str | None, history: str | None
    ) -> tuple[_Slot, str | None] | None:
        """The in-memory responses of a call after ``history`` and the scope they are kept
        under (None: unscoped), the scope's own first."""
        if (scope is not None or history is not None) and self._scoped:
            if scope is not None:
                slot = self._scoped.get((scope, history, tool, api, key))
                if slot is not None:
                    return slot, scope
            if history is not None:
                slot = self._scoped.get((None, history, tool, api, key))
                return None if slot is None else (slot, None)
        if history is not None:
            return None
        slot = self._slots.get((tool, api, key))
        return None if slot is None else (slot, None)

    def get(
        self,
        tool: str,
        api: str,
        key: str,
        occurrence: int = 1,
        *,
        scope: str | None = None,
        history: str | None = None,
    ) -> Response | None:
        """The response for the ``occurrence``-th identical call (in ``scope``, if given, after
        the write history ``history``), or None on a miss."""
        found = self.locate(tool, api, key, occurrence, scope=scope, history=history)
        return None if found is None else found[0]

    def locate(
        self,
        tool: str,
        api: str,
        key: str,
        occurrence: int = 1,
        *,
        scope: str | None = None,
        history: str | None = None,
    ) -> tuple[Response, Place] | None:
        """Like ``get``, with where the response is recorded (``Place``). That place always
        holds the same response (the first one stored wins, and a call the index holds is never
        added beside it), so a transport may keep what it encoded from it under that name."""
        index = self._index
        if index is not None:
            if scope is not None:
                found = index.locate(scope, tool, api, key, occurrence, history)
                if found is not None:
                    return found[0], (scope, tool, api, key, found[1], history)
            found = index.locate(None, tool, api, key, occurrence, history)
            if found is not None:
                return found[0], (None, tool, api, key, found[1], history)
        kept = self._slot(tool, api, key, scope, history)
        if kept is None:
            return None
        response, n = kept[0].pick(occurrence)
        return response, (kept[1], tool, api, key, n, history)

    def has(
        self,
        tool: str,
        api: str,
        key: str,
        *,
        scope: str | None = None,
        history: str | None = None,
    ) -> bool:
        """Whether the call has a recording (in ``scope`` or unscoped) after ``history``."""
        index = self._index
        if index is not None and (
            (scope is not None and index.has(scope, tool, api, key, history))
            or index.has(None, tool, api, key, history)
        ):
            return True
        return self._slot(tool, api, key, scope, history) is not None

    def lookup(
        self, tool: str, api: str, args: Mapping[str, Any] | None, occurrence: int = 1
    ) -> Response | None:
        """Canonicalise ``args`` and look the call up."""
        return self.get(tool, api, self.key(tool, api, args), occurrence)

    def keys(self, tool: str, api: str) -> Sequence[str]:
        """Recorded canonical keys of one API, in insertion order (decoded when read)."""
        added = self._keys.get((tool, api), [])
        if self._index is None:
            return added
        recorded = self._index.keys(tool, api, self._schemas.get((tool, api)))
        return [*recorded, *added] if added else recorded


MAX_COUNTED_CALLS = 100_000
"""How many ``(scope, call)`` counts an ``OccurrenceCounter`` keeps by default."""


class OccurrenceCounter:
    """Counts identical calls per scope; ``next`` returns 1 for the first call in a scope.

    At most ``limit`` counts are kept (scope and call together): beyond that the least recently
    used one is forgotten, so endless distinct calls (misses made up by a client) cannot grow
    memory without bound. A forgotten call counts from 1 again.
    """

    def __init__(self, limit: int = MAX_COUNTED_CALLS) -> None:
        if limit < 1:
            raise ValueError("limit must be at least 1")
        self.limit = limit
        self._counts: OrderedDict[tuple[str, str, str, str], int] = OrderedDict()
        self._per_scope: Counter[str] = Counter()

    def next(self, scope: str, tool: str, api: str, key: str) -> int:
        counts = self._counts
        call = (scope, tool, api, key)
        n = counts.get(call, 0) + 1
        counts[call] = n
        if n == 1:
            self._per_scope[scope] += 1
            if len(counts) > self.limit:
                self._forget(counts.popitem(last=False)[0][0])
        else:
            counts.move_to_end(call)
        return n

    def _forget(self, scope: str) -> None:
        left = self._per_scope[scope] - 1
        if left:
            self._per_scope[scope] = left
        else:
            del self._per_scope[scope]

    def peek(self, scope: str, tool: str, api: str, key: str) -> int:
        """How many identical calls the scope has made so far."""
        return self._counts.get((scope, tool, api, key), 0)

    def reset(self, scope: str | None = None) -> int:
        """Forget one scope's counts (or all of them); returns how many scopes were dropped."""
        if scope is None:
            n = len(self._per_scope)
            self._counts.clear()
            self._per_scope.clear()
            return n
        if scope not in self._per_scope:
            return 0
        for call in [c for c in self._counts if c[0] == scope]:
            del self._counts[call]
        del self._per_scope[scope]
        return 1

    def __len__(self) -> int:
        """How many counts are kept."""
        return len(self._counts)

    def scopes(self) -> list[str]:
        return sorted(self._per_scope)


class RecordingWriter:
    """Appends recordings to a JSONL file, one whole line per write, fsynced, thread-safe."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as e:
            raise MockToolsError(f"{self.path}: cannot open for recording: {e}") from e
        self._cut_torn_tail()

    def _cut_torn_tail(self) -> None:
        """Drop a partial last line (a crash mid-write in an older writer) before appending."""
        size = os.fstat(self._fd).st_size
        if size == 0 or os.pread(self._fd, 1, size - 1) == b"\n":
            return
        end = size
        keep = 0
        while end > 0:
            start = max(0, end - 65536)
            block = os.pread(self._fd, end - start, start)
            nl = block.rfind(b"\n")
            if nl >= 0:
                keep = start + nl + 1
                break
            end = start
        log.warning("%s: cutting a torn last line (%d bytes)", self.path, size - keep)
        os.ftruncate(self._fd, keep)

    def append(self, recording: Recording) -> None:
        line = json.dumps(
            recording.model_dump(mode="json", exclude_defaults=False),
            ensure_ascii=False,
            separators=(",", ":"),
        )
        data = (line + "\n").encode("utf-8")
        with self._lock:
            start = os.fstat(self._fd).st_size
            written = os.write(self._fd, data)
            if written != len(data):
                os.ftruncate(self._fd, start)
                raise MockToolsError(f"{self.path}: short write ({written}/{len(data)} bytes)")
            os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def __enter__(self) -> RecordingWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
