"""A world's state: collections of JSON records, as immutable snapshots with a content hash.

A ``State`` is a value. Its collections are persistent hash maps (``immutables.Map``, a HAMT), so
a write makes a new ``State`` that shares everything it did not change with the old one: holding
the state of every node of a search costs the records each node changed, and switching back to
an earlier state is taking its handle, whatever the world's size.

The content hash is the sum, modulo 2**256, of one SHA-256 per record over ``collection``, ``id``
and the record's canonical JSON (sorted keys, no whitespace, UTF-8, no NaN): equal contents give
equal hashes whatever order they were written in, and a write updates the sum by the records it
changed only (subtract the old record's digest, add the new one's). Records are plain JSON values
that are never changed in place: reads hand out copies, writes store copies.

Collections whose names start with ``_`` are the world's own bookkeeping (``_ids``: the id
allocator's counters). They are part of the state and of its hash (the same state gives the same
next id), but ``data_hash`` and the comparisons of final states leave them out: two states that
hold the same records are the same outcome, however many ids either allocated on the way.

A ``Tx`` is one call's transaction over a ``State``: it reads its own writes and ``commit``
returns the new ``State`` and the changes; a call that fails simply drops its ``Tx``.
Imports nothing of the project.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import immutables
import orjson

__all__ = [
    "Change",
    "State",
    "StateError",
    "Tx",
    "canonical_record",
    "record_copy",
]

_MOD = 1 << 256
BOOKKEEPING = "_"
"""Collections whose names start with this are the world's bookkeeping (see the module doc)."""
IDS = "_ids"


class StateError(ValueError):
    """A write the state cannot hold (not JSON, NaN, a bad collection or id)."""


def canonical_record(value: Any) -> str:
    """The canonical JSON text of a record; ``StateError`` for what JSON cannot hold."""
    try:
        return json.dumps(
            value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as e:
        raise StateError(f"not a JSON value: {e}") from None
    except RecursionError:
        raise StateError("not a JSON value: nested too deeply") from None


def record_copy(value: Any) -> Any:
    """A deep copy of a JSON value (orjson's round trip; ``copy.deepcopy`` for what orjson
    cannot write, integers beyond 64 bits)."""
    try:
        return orjson.loads(orjson.dumps(value))
    except (TypeError, orjson.JSONEncodeError):
        return copy.deepcopy(value)


def _digest(collection: str, rid: str, text: str) -> int:
    h = hashlib.sha256()
    h.update(collection.encode())
    h.update(b"\0")
    h.update(rid.encode())
    h.update(b"\0")
    h.update(text.encode())
    return int.from_bytes(h.digest(), "big")


def _check_name(what: str, name: Any) -> str:
    if not isinstance(name, str) or not name:
        raise StateError(f"a {what} is a non-empty string, not {name!r}")
    return name


@dataclass(frozen=True)
class Change:
    """One record a call changed: its value before and after (``None``: absent)."""

    collection: str
    id: str
    before: Any
    after: Any

    def to_json(self) -> dict[str, Any]:
        return {
            "collection": self.collection,
            "id": self.id,
            "before": self.before,
            "after": self.after,
        }


Collections = immutables.Map  # str -> immutables.Map[str, record]


class State:
    """An immutable snapshot of a world's records (see the module docstring)."""

    __slots__ = ("_cols", "_sum", "_data_sum", "_sorted")

    def __init__(self, cols: Collections, total: int, data_total: int) -> None:
        self._cols = cols
        self._sum = total
        self._data_sum = data_total
        self._sorted: dict[str, list[str]] = {}

    @classmethod
    def empty(cls) -> State:
        return cls(immutables.Map(), 0, 0)

    @classmethod
    def from_documents(cls, docs: Mapping[str, Mapping[str, Any]]) -> State:
        """A state holding ``docs``: collection name -> record id -> record."""
        tx = cls.empty().begin()
        for collection, records in docs.items():
            if not isinstance(records, Mapping):
                raise StateError(f"collection {collection!r} is not a mapping of id -> record")
            for rid, record in records.items():
                tx.put(collection, rid, record)
        return tx.commit()[0]

    # -- identity ---------------------------------------------------------------------------

    @property
    def hash(self) -> str:
        """The content hash of every collection, bookkeeping included."""
        return f"{self._sum:064x}"

    @property
    def data_hash(self) -> str:
        """The content hash of the records only (bookkeeping collections left out)."""
        return f"{self._data_sum:064x}"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and other._sum == self._sum

    def __hash__(self) -> int:
        return hash(self._sum)

    def __repr__(self) -> str:
        return f"State({self.hash[:12]}, {self.size} records)"

    # -- reading ----------------------------------------------------------------------------

    @property
    def size(self) -> int:
        return sum(len(c) for c in self._cols.values())

    def collections(self) -> list[str]:
        """Collection names, sorted."""
        return sorted(self._cols.keys())

    def ids(self, collection: str) -> list[str]:
        """The ids of a collection in sorted order (kept for the state: computed once)."""
        found = self._sorted.get(collection)
        if found is None:
            col = self._cols.get(collection)
            found = self._sorted[collection] = sorted(col.keys()) if col is not None else []
        return found

    def raw(self, collection: str, rid: str) -> Any:
        """The stored record itself (never change it), or None."""
        col = self._cols.get(collection)
        return None if col is None else col.get(rid)

    def get(self, collection: str, rid: str) -> Any:
        """A copy of a record, or None."""
        found = self.raw(collection, rid)
        return None if found is None else record_copy(found)

    def count(self, collection: str) -> int:
        col = self._cols.get(collection)
        return 0 if col is None else len(col)

    def to_documents(self, *, bookkeeping: bool = True) -> dict[str, dict[str, Any]]:
        """Every collection as plain JSON (collections and ids sorted)."""
        return {
            name: {rid: record_copy(self._cols[name][rid]) for rid in self.ids(name)}
            for name in self.collections()
            if bookkeeping or not name.startswith(BOOKKEEPING)
        }

    def begin(self, *, writable: bool = True) -> Tx:
        """A transaction over this state."""
        return Tx(self, writable=writable)


class ReadOnlyWrite(StateError):
    """A read tool tried to write."""


class Tx:
    """One call's view of a state: reads see the call's own writes; ``commit`` makes the new
    ``State`` (the base is never changed)."""

    def __init__(self, base: State, *, writable: bool = True) -> None:
        self.base = base
        self.writable = writable
        self._muts: dict[str, immutables.MapMutation] = {}
        self._before: dict[tuple[str, str], Any] = {}
        self._delta = 0
        self._data_delta = 0

    # -- reads ------------------------------------------------------------------------------

    def _col(self, collection: str) -> Any:
        """The collection as this transaction sees it (a map, or its pending mutation: both
        answer ``get`` and ``[]``), or None."""
        mut = self._muts.get(collection)
        if mut is not None:
            return mut
        return self.base._cols.get(collection)

    def get(self, collection: str, rid: str) -> Any:
        """A copy of the record, or None."""
        col = self._col(collection)
        found = None if col is None else col.get(rid)
        return None if found is None else record_copy(found)

    def has(self, collection: str, rid: str) -> bool:
        col = self._col(collection)
        return col is not None and col.get(rid) is not None

    def ids(self, collection: str) -> list[str]:
        """The ids of a collection, sorted."""
        base = self.base.ids(collection)
        mut = self._muts.get(collection)
        if mut is None:
            return list(base)
        present = set(base)
        for c, rid in self._before:
            if c == collection:
                if mut.get(rid) is not None:
                    present.add(rid)
                else:
                    present.discard(rid)
        return sorted(present)

    def records(self, collection: str) -> Iterator[tuple[str, Any]]:
        """``(id, copy of the record)`` for every record of a collection, by id."""
        col = self._col(collection)
        if col is None:
            return
        for rid in self.ids(collection):
            yield rid, record_copy(col[rid])

    def find(self, collection: str, **equal: Any) -> list[dict[str, Any]]:
        """Copies of the records whose fields equal ``equal`` (each with its ``id`` added when it
        has none), by id."""
        col = self._col(collection)
        if col is None:
            return []
        out = []
        for rid in self.ids(collection):
            record = col[rid]
            if isinstance(record, dict) and all(
                k in record and record[k] == v for k, v in equal.items()
            ):
                found = record_copy(record)
                found.setdefault("id", rid)
                out.append(found)
        return out

    def count(self, collection: str) -> int:
        col = self._col(collection)
        return 0 if col is None else len(col)

    # -- writes -----------------------------------------------------------------------------

    def put(self, collection: str, rid: str, record: Any) -> None:
        """Insert or replace a record (a copy of ``record`` is stored)."""
        self._write(collection, rid, record)

    def update(self, collection: str, rid: str, **fields: Any) -> dict[str, Any]:
        """Set fields of an existing object record; returns the updated copy."""
        current = self.get(collection, rid)
        if not isinstance(current, dict):
            what = "no" if current is None else "not an object"
            raise StateError(f"{collection}/{rid}: {what} record to update")
        current.update(fields)
        self._write(collection, rid, current)
        return current

    def delete(self, collection: str, rid: str) -> bool:
        """Remove a record; False when there was none."""
        if not self.has(collection, rid):
            return False
        self._write(collection, rid, None, delete=True)
        return True

    def _write(self, collection: str, rid: str, record: Any, *, delete: bool = False) -> None:
        if not self.writable:
            raise ReadOnlyWrite(
                f"a read tool cannot write ({collection}/{rid}): declare the tool a write"
            )
        _check_name("collection name", collection)
        _check_name("record id", rid)
        if record is None and not delete:
            raise StateError(f"{collection}/{rid}: a record cannot be null (delete it instead)")
        old = None
        col = self._col(collection)
        if col is not None:
            old = col.get(rid)
        key = (collection, rid)
        if key not in self._before:
            self._before[key] = old
        mut = self._muts.get(collection)
        if mut is None:
            base = self.base._cols.get(collection)
            mut = self._muts[collection] = (base or immutables.Map()).mutate()
        delta = 0
        if old is not None:
            delta -= _digest(collection, rid, canonical_record(old))
        if delete:
            del mut[rid]
        else:
            text = canonical_record(record)
            delta += _digest(collection, rid, text)
            mut[rid] = _loads(text)
        self._delta += delta
        if not collection.startswith(BOOKKEEPING):
            self._data_delta += delta

    # -- ids --------------------------------------------------------------------------------

    def new_id(self, collection: str, prefix: str = "", width: int = 0) -> str:
        """The next id of ``collection``: ``prefix`` and a number one above the highest number
        any id of that prefix holds (counted once per state, then kept in ``_ids``)."""
        counter_key = f"{collection}\0{prefix}"
        counters = self._col(IDS)
        last = counters.get(counter_key) if counters is not None else None
        if last is None:
            last = 0
            for rid in self.ids(collection):
                tail = rid[len(prefix) :] if rid.startswith(prefix) else ""
                if tail.isdigit():
                    last = max(last, int(tail))
        number = int(last) + 1
        self._write(IDS, counter_key, number)
        return f"{prefix}{number:0{width}d}"

    # -- the end ----------------------------------------------------------------------------

    @property
    def dirty(self) -> bool:
        return bool(self._before)

    def commit(self) -> tuple[State, list[Change]]:
        """The new state and the records that changed, by collection and id (bookkeeping
        left out)."""
        if not self._muts:
            return self.base, []
        cols = self.base._cols.mutate()
        for name, mut in self._muts.items():
            finished = mut.finish()
            if len(finished):
                cols[name] = finished
            elif name in cols:
                del cols[name]
        state = State(
            cols.finish(),
            (self.base._sum + self._delta) % _MOD,
            (self.base._data_sum + self._data_delta) % _MOD,
        )
        changes = []
        for (collection, rid), before in sorted(self._before.items()):
            if collection.startswith(BOOKKEEPING):
                continue
            after = state.raw(collection, rid)
            if before != after:
                changes.append(Change(collection, rid, record_copy(before), record_copy(after)))
        for name, ids in self.base._sorted.items():  # unwritten collections keep theirs
            if name not in self._muts:
                state._sorted[name] = ids
        return state, changes


def _loads(text: str) -> Any:
    """A fresh JSON value from canonical text (orjson; ``json`` for integers beyond 64 bits)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def json_equal(a: Any, b: Any) -> bool:
    """Equal as JSON values: numbers by value (``1`` and ``1.0`` alike), but ``true`` is not
    ``1`` and ``false`` not ``0`` (Python's ``True == 1`` would have them equal)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)
