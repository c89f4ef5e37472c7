"""The compact recording index: a suite's JSONL recordings looked up without loading them.

Built once from the suite's ``recordings/*.jsonl`` and cached beside the suite
(``<suite>/.cache/recordings.idx``; when that folder cannot be written, under
``$MOCK_TOOLS_CACHE_DIR``, ``~/.cache/mock_tools`` or the temp dir, named by the fingerprint). A
cached index is used only when its format version, the suite fingerprint and its checksum all
match; otherwise it is built again.

The file is a header and fixed-width arrays, read through ``mmap`` (nothing is decoded on open):

- per call ``(write history, scope, tool, api, canonical key)``: a 128-bit blake2b digest split
  into ``hi`` and ``lo``, sorted by ``(hi, lo, occurrence)`` with the file order kept among
  equals; beside each entry its occurrence (0: every occurrence) and where its JSONL line is
  (file, offset, length);
- a bucket table on the top bits of ``hi`` (about one entry per bucket), so a lookup reads two
  bucket bounds and compares one or two entries whatever the size of the suite;
- every line in file order (``Suite.recordings`` decodes them on demand), the duplicate lines,
  and per API the lines that first recorded each of its keys (``RecordingStore.keys``).

A hit reads its line with ``pread`` and decodes the response; the JSONL bytes are never mapped,
so what stays resident is the index (about 60 bytes per recording) and the page cache.

The build parses each line with ``orjson`` (``json`` when it is missing), checks the fields that
make the key, canonicalises the arguments and hashes them; large suites are split over two
forked processes. Full model validation of a line happens when it is decoded (serving it,
iterating ``Suite.recordings``, ``mock_tools validate``). Imports ``mock_tools.canonical``,
``models`` and ``errors`` only.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import json
import mmap
import multiprocessing
import os
import re
import struct
import sys
import tempfile
import threading
import weakref
from array import array
from bisect import bisect_left
from collections import Counter, OrderedDict
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from itertools import accumulate, compress, repeat
from operator import eq
from pathlib import Path
from typing import Any, Literal, TypeVar, overload

import orjson
from pydantic import ValidationError

from mock_tools.canonical import canonical_key, canonicaliser, dumps_canonical
from mock_tools.errors import SuiteError, limit_message
from mock_tools.models import HISTORY_PATTERN, Recording, Response

_DUMPS_OPTIONS = orjson.OPT_SORT_KEYS | orjson.OPT_STRICT_INTEGER
_HASHING = 1  # what the digests are made of (orjson's sorted text), kept in the header

__all__ = [
    "FORMAT_VERSION",
    "IndexedRecordings",
    "LineError",
    "RecordingIndex",
    "chosen_occurrence",
    "decode_line",
    "open_index",
    "pick_occurrence",
]

T = TypeVar("T")

FORMAT_VERSION = 6
"""Bumped whenever the layout, the hashing or the canonical key changes."""

CACHE_NAME = "recordings.idx"
_MAGIC = b"MTRIDX\0\0"
_HEADER = struct.Struct("<8sII80sQQQQQIII16s")
_HALVES = struct.Struct(">QQ")
_RECORD = struct.Struct(">QQQ")  # after the digest: occurrence, loc, length << 32 | occurrence
_OFFSET_BITS = 40  # a line's offset within its file; the file's number sits above it
_MAX_OCCURRENCE = 2**31
_PARALLEL_BYTES = 32 << 20  # suites bigger than this are parsed by two processes
DECODED_CACHE = 1024
"""How many served responses an index keeps decoded by default (the most recently served)."""
_HISTORY = re.compile(HISTORY_PATTERN)
_MEMO_KEY_CHARS = 512
"""The longest canonical key whose place an index keeps (``RecordingIndex._group``)."""


def _prefix(scope: str | None, history: str | None) -> bytes:
    """What a call's digest starts with: its scope, after its write history when it has one (a
    history is hex digits, so ``\2<history>`` never runs into the scope's ``\0`` or ``\1``;
    the empty history adds nothing, so a stateless recording hashes as it always did)."""
    prefix = b"\0" if scope is None else b"\1" + scope.encode("utf-8", "surrogatepass")
    return prefix if history is None else b"\2" + history.encode("ascii") + prefix


def _digest(
    scope: str | None, tool: str, api: str, text: bytes, history: str | None = None
) -> tuple[int, int]:
    """The call's 128-bit digest as two 64-bit halves."""
    head = f"\0{tool}\0{api}\0".encode("utf-8", "surrogatepass")
    digest = hashlib.blake2b(_prefix(scope, history) + head + text, digest_size=16).digest()
    return _HALVES.unpack(digest)


def _key_text(key: str) -> bytes | None:
    """What is hashed for a canonical key (see ``_canonical_text``), or None when orjson cannot
    write it (then the key's own text is hashed)."""
    try:
        return orjson.dumps(orjson.loads(key), option=_DUMPS_OPTIONS)
    except (TypeError, ValueError):
        return None


def _canonical_text(canon: dict[str, Any]) -> tuple[bytes, bool]:
    """What is hashed for canonical arguments: orjson's sorted text (fast to write), or where it
    cannot write them (integers beyond 2**53, lone surrogates, deep nesting) the canonical key
    itself; True in the second case. ``_key_text`` of their canonical key gives the same bytes:
    orjson reads back exactly what it could write."""
    try:
        return orjson.dumps(canon, option=_DUMPS_OPTIONS), False
    except (TypeError, ValueError):
        pass
    return dumps_canonical(canon).encode("utf-8", "surrogatepass"), True


def chosen_occurrence(recorded: Collection[int], occurrence: int) -> int:
    """Which recorded occurrence (0: the one for every occurrence) answers the
    ``occurrence``-th identical call: its own, else the one for every occurrence, else the last
    one for a call beyond it, else the latest before it (the earliest for a call before them
    all)."""
    if occurrence in recorded:
        return occurrence
    if 0 in recorded:
        return 0
    last = max(recorded)
    if occurrence > last:
        return last
    earlier = [n for n in recorded if n <= occurrence]
    return max(earlier) if earlier else min(recorded)


def pick_occurrence(table: Mapping[int, T], occurrence: int) -> T:
    """What answers the ``occurrence``-th identical call among responses by occurrence (see
    ``chosen_occurrence``)."""
    return table[chosen_occurrence(table.keys(), occurrence)]


# -- building ------------------------------------------------------------------------------------


@dataclass
class _Chunk:
    """What parsing one run of lines produces."""

    records: list[bytes]  # per line, ``_RECORD`` after its digest; sorted
    locs: array  # 'Q', per line in file order: file << 40 | offset
    packed: array  # 'Q', per line in file order: length << 32 | occurrence
    apis: array  # 'I', per line in file order: the number of its API in ``api_names``
    api_names: list[tuple[str, str]]
    unscoped: bytearray  # per line in file order: 1 for a recording without scope or history
    fallbacks: int  # lines whose key is hashed as its canonical text


class LineError(Exception):
    """What is wrong with one JSONL line; the caller says where it is."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.message, self.field = message, field


def decode_line(raw: bytes) -> Any:
    """One JSONL line's value; ``LineError`` says why it cannot be read."""
    try:
        return orjson.loads(raw)
    except ValueError:
        pass  # json says what is wrong (and reads what orjson refuses, like NaN)
    try:
        line = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise LineError(f"not UTF-8 text ({e.reason} at byte {e.start})") from None
    try:
        return json.loads(line)
    except json.JSONDecodeError as e:
        raise LineError(f"invalid JSON: {e.msg}") from e
    except (ValueError, RecursionError) as e:
        raise LineError(f"unreadable JSON: {limit_message(e)}") from e


def _key_fields(data: Any) -> tuple[str, str, dict[str, Any], int, str | None, str | None]:
    """The fields that make a recording's key, checked as ``Recording`` would."""
    if not isinstance(data, dict):
        raise LineError("expected a mapping for Recording")
    tool, api = data.get("tool"), data.get("api")
    args = data.get("args", {})
    occ = data.get("occurrence")
    scope = data.get("scope")
    if not isinstance(tool, str) or not isinstance(api, str):
        raise LineError("'tool' and 'api' must be strings", "tool")
    if not isinstance(args, dict):
        raise LineError("must be an object", "args")
    if occ is not None and (
        not isinstance(occ, int) or isinstance(occ, bool) or not 1 <= occ < _MAX_OCCURRENCE
    ):
        raise LineError(f"must be an integer in 1..{_MAX_OCCURRENCE - 1}", "occurrence")
    if scope is not None and not isinstance(scope, str):
        raise LineError("must be a string", "scope")
    history = data.get("history")
    if history is not None and not (isinstance(history, str) and _HISTORY.fullmatch(history)):
        raise LineError("must be a string of 1 to 64 lower-case hex digits", "history")
    if not isinstance(data.get("response"), dict):
        raise LineError("must be an object", "response")
    return tool, api, args, occ or 0, scope, history


def _parse_chunk(
    job: tuple[int, str, int, int], schemas: Mapping[tuple[str, str], dict[str, Any]]
) -> _Chunk:
    """Parse the lines of ``path`` between byte ``start`` and ``end`` (line boundaries)."""
    file_no, path, start, end = job
    with open(path, "rb") as fh:
        fh.seek(start)
        data = fh.read(end - start)
    out = _Chunk([], array("Q"), array("Q"), array("I"), [], bytearray(), 0)
    api_no: dict[tuple[str, str], int] = {}
    heads: dict[tuple[str, str], bytes] = {}
    plans: dict[tuple[str, str], Callable[[dict[str, Any]], dict[str, Any]]] = {}
    base = file_no << _OFFSET_BITS
    b2 = hashlib.blake2b
    pack = _RECORD.pack
    add_record, add_loc, add_packed = out.records.append, out.locs.append, out.packed.append
    add_api, add_unscoped = out.apis.append, out.unscoped.append
    pos = start
    for raw in data.split(b"\n"):
        size = len(raw)
        if raw.strip():
            try:
                tool, api, args, occ, scope, history = _key_fields(decode_line(raw))
            except LineError as e:
                where = f"{path}:{_line_number(path, pos)}"
                raise SuiteError(e.message, file=where, field=e.field) from None
            pair = (tool, api)
            n = api_no.get(pair)
            if n is None:
                n = api_no[pair] = len(api_no)
                heads[pair] = f"\0{tool}\0{api}\0".encode("utf-8", "surrogatepass")
                plans[pair] = canonicaliser(schemas.get(pair))
            text, fallback = _canonical_text(plans[pair](args))
            out.fallbacks += fallback
            digest = b2(_prefix(scope, history) + heads[pair] + text, digest_size=16).digest()
            packed = size << 32 | occ
            add_record(digest + pack(occ, base | pos, packed))
            add_loc(base | pos)
            add_packed(packed)
            add_api(n)
            add_unscoped(scope is None and history is None)
        pos += size + 1
    out.records.sort()  # by digest, occurrence, then place in the files
    out.api_names = list(api_no)
    return out


def _line_number(path: str, offset: int) -> int:
    with open(path, "rb") as fh:
        return fh.read(offset).count(b"\n") + 1


def _jobs(files: list[Path], parts: int) -> list[tuple[int, str, int, int]]:
    """Split the files into about ``parts`` runs of whole lines."""
    total = sum(f.stat().st_size for f in files)
    step = max(1, -(-total // parts))
    jobs: list[tuple[int, str, int, int]] = []
    for n, f in enumerate(files):
        size = f.stat().st_size
        start = 0
        with f.open("rb") as fh:
            while start < size:
                cut = min(size, start + step)
                if cut < size:
                    fh.seek(cut)
                    rest = fh.readline()
                    cut += len(rest)
                jobs.append((n, str(f), start, cut))
                start = cut
    return jobs


def _parse_all(
    files: list[Path], schemas: Mapping[tuple[str, str], dict[str, Any]]
) -> list[_Chunk]:
    total = sum(f.stat().st_size for f in files)
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    if total < _PARALLEL_BYTES or (cpus or 1) < 2 or sys.platform != "linux":
        return [_parse_chunk(job, schemas) for job in _jobs(files, 1)]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        return pool.map(partial(_parse_chunk, schemas=schemas), _jobs(files, 2))


def build_index(
    root: Path, fingerprint: str, schemas: Mapping[tuple[str, str], dict[str, Any]]
) -> bytes:
    """The index file's bytes for the suite at ``root``."""
    files = _recording_files(root)
    enabled = gc.isenabled()
    gc.disable()  # millions of short-lived containers: the collector would only slow this down
    try:
        chunks = _parse_all(files, schemas)
        return _assemble(files, root, fingerprint, chunks)
    finally:
        if enabled:
            gc.enable()


def _assemble(files: list[Path], root: Path, fingerprint: str, chunks: list[_Chunk]) -> bytes:
    """Merge the chunks' sorted records, find repeated calls, and lay the arrays out. Every pass
    over all lines is a C-level one (sorting bytes, strided array copies, ``map``, ``compress``);
    Python code only runs for lines that share the first half of their digest (one call's
    occurrences, repeats)."""
    records: list[bytes] = []
    locs, packed, api_of_line = array("Q"), array("Q"), array("I")
    unscoped = bytearray()
    api_table: dict[tuple[str, str], int] = {}
    fallbacks = 0
    for c in chunks:
        records += c.records
        locs += c.locs
        packed += c.packed
        unscoped += c.unscoped
        remap = [api_table.setdefault(pair, len(api_table)) for pair in c.api_names]
        if remap == list(range(len(remap))):
            api_of_line += c.apis
        else:
            api_of_line += array("I", map(remap.__getitem__, c.apis))
        fallbacks += c.fallbacks
    if len(chunks) > 1:
        records.sort()  # sorted runs, one per chunk: a merge
    n = len(records)
    # a record is five big-endian words: hi, lo, occurrence, loc, length << 32 | occurrence
    words = array("Q", b"".join(records))
    del records
    if sys.byteorder == "little":
        words.byteswap()
    his = words[0::5]
    same_hi = list(compress(range(1, n), map(eq, his[1:], his[:-1])))
    repeats = [i for i in same_hi if words[5 * i + 1] == words[5 * i - 4]]  # later lines of a call
    dups = [i for i in repeats if words[5 * i + 2] == words[5 * i - 3]]
    line_of = partial(bisect_left, locs)  # lines are in file order: their locs are sorted
    first_of_call = bytearray(unscoped)  # per line: it first recorded a call of every caller
    for i in repeats:
        first_of_call[line_of(words[5 * i + 3])] = 0
    dup_lines = array("Q", sorted(line_of(words[5 * i + 3]) for i in dups))
    if dups:
        keep = bytearray(b"\1") * n
        for i in dups:
            keep[i] = 0
        kept = array("Q", bytes(40 * (n - len(dups))))
        for w in range(5):
            kept[w::5] = array("Q", compress(words[w::5], keep))
        words, his = kept, kept[0::5]
    count = len(his)
    bits = max(1, (count - 1).bit_length())
    counts = Counter(map((64 - bits).__rrshift__, his))
    buckets = array("I", [0])
    buckets += array("I", accumulate(map(counts.get, range(1 << bits), repeat(0))))
    key_lines = list(compress(range(n), first_of_call))
    if len(api_table) > 1:
        key_lines.sort(key=api_of_line.__getitem__)
        per_api = Counter(map(api_of_line.__getitem__, key_lines))
    else:
        per_api = Counter({0: len(key_lines)})
    api_list = sorted(api_table, key=api_table.__getitem__)
    starts = [0, *accumulate(per_api.get(i, 0) for i in range(len(api_list)))]
    meta = {
        "files": [f.relative_to(root).as_posix() for f in files],
        "sizes": [f.stat().st_size for f in files],
        "apis": [[t, a, starts[i], starts[i + 1]] for i, (t, a) in enumerate(api_list)],
    }
    # What one lookup reads sits together (a random lookup in a big suite misses the CPU
    # caches once per place it reads): an entry is (hi, lo, loc, length << 32 | occurrence),
    # sorted; the lines keep (loc, length << 32 | occurrence) in file order.
    entries = array("Q", bytes(32 * count))
    for to, source in enumerate((0, 1, 3, 4)):
        entries[to::4] = words[source::5]
    info = array("Q", bytes(16 * n))
    info[0::2] = locs
    info[1::2] = packed
    arrays = [entries, buckets, info, dup_lines, array("Q", key_lines)]
    meta_bytes = json.dumps(meta).encode()
    body = bytearray(_pad(meta_bytes))
    for values in arrays:
        body += _pad(values.tobytes())
    fields = (
        _MAGIC,
        FORMAT_VERSION,
        _HEADER.size,
        fingerprint.encode(),
        count,
        n,
        len(dups),
        len(key_lines),
        len(meta_bytes),
        bits,
        _HASHING,
        fallbacks > 0,
    )
    unsigned = _HEADER.pack(*fields, bytes(16))
    header = _HEADER.pack(*fields, _checksum(unsigned, body))
    return header + bytes(body)


def _checksum(header: bytes | memoryview, body: bytes | bytearray | memoryview) -> bytes:
    """What guards a cached index: its header (the checksum field zeroed) and its body, so a
    damaged count, length or bit width is caught like a damaged array."""
    digest = hashlib.blake2b(header[: _HEADER.size - 16], digest_size=16)
    digest.update(body)
    return digest.digest()


def _pad(b: bytes) -> bytes:
    return b + b"\0" * (-len(b) % 8)


def _recording_files(root: Path) -> list[Path]:
    folder = root / "recordings"
    return sorted(folder.glob("*.jsonl")) if folder.is_dir() else []


# -- opening -------------------------------------------------------------------------------------


class RecordingIndex:
    """An open index: lookups by call, lines by number. Thread-safe; read-only. A hit reads its
    line and validates its response (only; the whole line is validated when read as a
    ``Recording``); the last ``cache_size`` responses served are kept decoded, and as many calls
    looked up keep where their entries are (a hot call skips the digest and the bucket search)."""

    def __init__(
        self,
        root: Path,
        data: mmap.mmap | bytes,
        *,
        path: Path | None = None,
        cache_size: int = DECODED_CACHE,
    ) -> None:
        self.root = root
        self.path = path
        self.cache_size = cache_size
        """How many served responses are kept decoded (the most recently served; 0: none)."""
        self._data = data
        head = _HEADER.unpack_from(data, 0)
        _, _, size, _, n, n_lines, n_dups, n_keys, meta_len, bits, _, fallbacks, _ = head
        self.entries = n
        self.lines = n_lines
        view = memoryview(data)
        meta = json.loads(bytes(view[size : size + meta_len]))
        at = size + meta_len + (-meta_len % 8)

        def take(code: Literal["Q", "I"], count: int) -> memoryview:
            nonlocal at
            width = 8 if code == "Q" else 4
            part = view[at : at + width * count].cast(code)
            at += width * count + (-(width * count) % 8)
            return part

        self._entries = take("Q", 4 * n)  # (hi, lo, loc, length << 32 | occurrence), sorted
        self._buckets = take("I", (1 << bits) + 1)
        self._info = take("Q", 2 * n_lines)  # (loc, length << 32 | occurrence) per line
        self._dups = take("Q", n_dups)
        self._key_lines = take("Q", n_keys)
        self._shift = 64 - bits
        self._fallbacks = bool(fallbacks)
        self.files = [root / f for f in meta["files"]]
        self._sizes: list[int] = meta["sizes"]
        self._apis = {(t, a): (s, e) for t, a, s, e in meta["apis"]}
        self._fds: list[int] = []
        self._lock = threading.Lock()
        self._decoded: OrderedDict[int, Response] = OrderedDict()
        self._groups: dict[tuple[str | None, str, str, str, str | None], range] = {}
        self._api_keys: dict[tuple[str, str], _ApiKeys] = {}

    # -- lines ---------------------------------------------------------------------------------

    def _fd(self, file_no: int) -> int:
        if not self._fds:
            with self._lock:
                if not self._fds:
                    self._fds = self._open_files()
                    weakref.finalize(self, _close_all, self._fds)
        return self._fds[file_no]

    def _open_files(self) -> list[int]:
        fds: list[int] = []
        try:
            for f, size in zip(self.files, self._sizes, strict=True):
                fds.append(os.open(f, os.O_RDONLY))
                if os.fstat(fds[-1]).st_size < size:  # lines appended later do no harm
                    raise SuiteError(
                        "cut short since it was indexed; load the suite again", file=str(f)
                    )
        except OSError as e:
            _close_all(fds)
            raise SuiteError(
                f"cannot read: {e.strerror}; load the suite again", file=e.filename
            ) from e
        except SuiteError:
            _close_all(fds)
            raise
        return fds

    def _read(self, loc: int, length: int) -> bytes:
        file_no, offset = loc >> _OFFSET_BITS, loc & ((1 << _OFFSET_BITS) - 1)
        raw = os.pread(self._fd(file_no), length, offset)
        if len(raw) < length:  # the file was cut short while the suite was being served
            raise SuiteError(
                "cut short since it was indexed; load the suite again",
                file=str(self.files[file_no]),
            )
        return raw

    def _where(self, loc: int) -> str:
        path = self.files[loc >> _OFFSET_BITS]
        return f"{path}:{_line_number(str(path), loc & ((1 << _OFFSET_BITS) - 1))}"

    def line(self, number: int) -> Recording:
        """The ``number``-th recording line (0-based, file then line order), validated."""
        info = self._info
        return self._recording(info[2 * number], info[2 * number + 1] >> 32)

    def _recording(self, loc: int, length: int) -> Recording:
        try:
            return Recording.model_validate(decode_line(self._read(loc, length)))
        except LineError as e:
            raise SuiteError(e.message, file=self._where(loc)) from None
        except ValidationError as e:
            err = e.errors()[0]
            field = ".".join(str(x) for x in err["loc"]) or None
            raise SuiteError(err["msg"], file=self._where(loc), field=field) from None

    # -- calls ---------------------------------------------------------------------------------

    def _group(
        self, scope: str | None, tool: str, api: str, key: str, history: str | None
    ) -> range:
        """The entries of one call; kept for calls looked up lately (with the response cache:
        ``cache_size`` calls, short keys only; the index never changes, so neither does a
        call's place, found or not)."""
        if not self.cache_size or len(key) > _MEMO_KEY_CHARS:
            return self._search(scope, tool, api, key, history)
        memo = (scope, tool, api, key, history)
        groups = self._groups
        found = groups.get(memo)
        if found is None:
            found = self._search(scope, tool, api, key, history)
            if len(groups) >= self.cache_size:
                groups.clear()
            groups[memo] = found
        return found

    def _search(
        self, scope: str | None, tool: str, api: str, key: str, history: str | None
    ) -> range:
        text = _key_text(key)
        found = range(0) if text is None else self._find(scope, tool, api, text, history)
        if not found and (text is None or self._fallbacks):  # hashed as the key's own text
            found = self._find(scope, tool, api, key.encode("utf-8", "surrogatepass"), history)
        return found

    def _find(
        self, scope: str | None, tool: str, api: str, text: bytes, history: str | None
    ) -> range:
        """The entries (consecutive) of one call, as a range of entry numbers."""
        hi, lo = _digest(scope, tool, api, text, history)
        bucket = hi >> self._shift
        i, end = self._buckets[bucket], self._buckets[bucket + 1]
        entries = self._entries
        while i < end and (entries[4 * i] != hi or entries[4 * i + 1] != lo):
            i += 1
        j = i
        while j < end and entries[4 * j] == hi and entries[4 * j + 1] == lo:
            j += 1
        return range(i, j)

    def has(
        self, scope: str | None, tool: str, api: str, key: str, history: str | None = None
    ) -> bool:
        return len(self._group(scope, tool, api, key, history)) > 0

    def locate(
        self,
        scope: str | None,
        tool: str,
        api: str,
        key: str,
        occurrence: int,
        history: str | None = None,
    ) -> tuple[Response, int] | None:
        """The response recorded for the ``occurrence``-th identical call (after the write
        history ``history``) and the occurrence it was recorded for (0: every one), or None."""
        group = self._group(scope, tool, api, key, history)
        if not group:
            return None
        entry = self._choose(group, occurrence)
        return self._response(entry), self._entries[4 * entry + 3] & 0xFFFFFFFF

    def _choose(self, group: range, occurrence: int) -> int:
        if len(group) == 1:
            return group.start
        entries = self._entries
        return pick_occurrence({entries[4 * i + 3] & 0xFFFFFFFF: i for i in group}, occurrence)

    def _response(self, entry: int) -> Response:
        cache = self._decoded
        if self.cache_size:
            with self._lock:
                hit = cache.get(entry)
                if hit is not None:
                    cache.move_to_end(entry)
                    return hit
        loc = self._entries[4 * entry + 2]
        try:
            data = decode_line(self._read(loc, self._entries[4 * entry + 3] >> 32))
            response = Response.model_validate(data["response"])
        except LineError as e:
            raise SuiteError(e.message, file=self._where(loc)) from None
        except ValidationError as e:
            err = e.errors()[0]
            field = ".".join(str(x) for x in ("response", *err["loc"]))
            raise SuiteError(err["msg"], file=self._where(loc), field=field) from None
        if self.cache_size:
            with self._lock:
                cache[entry] = response
                if len(cache) > self.cache_size:
                    cache.popitem(last=False)
        return response

    def keys(self, tool: str, api: str, schema: dict[str, Any] | None) -> Sequence[str]:
        """The API's recorded canonical keys (no scope, the empty history), in the order first
        recorded; each is decoded once, when first read (``nearest`` reads them all on every
        miss)."""
        found = self._api_keys.get((tool, api))
        if found is None:
            start, end = self._apis.get((tool, api), (0, 0))
            found = self._api_keys[(tool, api)] = _ApiKeys(self, self._key_lines[start:end], schema)
        return found

    def duplicates(self) -> Iterator[Recording]:
        """The lines that repeat an earlier recording of the same call and occurrence."""
        for number in self._dups:
            yield self.line(number)

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled (for a process pool or a Ray worker) as where the index is, or its bytes."""
        fingerprint = _HEADER.unpack_from(self._data, 0)[3].rstrip(b"\0").decode()
        if self.path is not None:
            return (_reopen, (self.root, self.path, fingerprint))
        return (RecordingIndex, (self.root, bytes(self._data)))

    def close(self) -> None:
        with self._lock:
            _close_all(self._fds)


def _close_all(fds: list[int]) -> None:
    while fds:
        with contextlib.suppress(OSError):
            os.close(fds.pop())


class _ApiKeys(Sequence[str]):
    """An API's keys, canonicalised from their lines when first asked for, then kept."""

    def __init__(self, index: RecordingIndex, lines: memoryview, schema: Any) -> None:
        self._index, self._lines, self._schema = index, lines, schema
        self._read: list[str | None] = [None] * len(lines)

    def __len__(self) -> int:
        return len(self._lines)

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[n] for n in range(*i.indices(len(self)))]
        key = self._read[i]
        if key is None:
            key = canonical_key(self._index.line(self._lines[i]).args, self._schema)
            self._read[i] = key
        return key


class IndexedRecordings(Sequence[Recording]):
    """``Suite.recordings`` of a suite folder: every line of its JSONL files, decoded (and
    validated) when read; ``recording_index`` answers lookups without decoding anything else."""

    def __init__(self, recording_index: RecordingIndex) -> None:
        self.recording_index = recording_index

    def __len__(self) -> int:
        return self.recording_index.lines

    @overload
    def __getitem__(self, i: int) -> Recording: ...
    @overload
    def __getitem__(self, i: slice) -> list[Recording]: ...
    def __getitem__(self, i: int | slice) -> Recording | list[Recording]:
        if isinstance(i, slice):
            return [self.recording_index.line(n) for n in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.recording_index.line(i)

    def __iter__(self) -> Iterator[Recording]:
        for n in range(len(self)):
            yield self.recording_index.line(n)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Sequence):
            return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"<{len(self)} recordings of {self.recording_index.root}>"


# -- the cache -----------------------------------------------------------------------------------


def cache_locations(
    root: Path, fingerprint: str, cache_dir: str | Path | None, *, beside: str = CACHE_NAME
) -> list[Path]:
    """Where an index (or another cache of the suite named ``beside`` in its ``.cache``) may be
    cached, in the order tried: beside the suite, then the cache dir (``cache_dir``, else
    ``$MOCK_TOOLS_CACHE_DIR``, else ``~/.cache/mock_tools``), then the temp dir (the last two
    named by the fingerprint)."""
    stem, _, suffix = beside.partition(".")
    name = f"{stem}-{fingerprint.split(':')[-1][:32]}.{suffix}"
    home = cache_dir or os.environ.get("MOCK_TOOLS_CACHE_DIR")
    fallback = Path(home) if home else Path.home() / ".cache" / "mock_tools"
    tmp = Path(tempfile.gettempdir()) / f"mock_tools-{os.getuid() if hasattr(os, 'getuid') else 0}"
    return [root / ".cache" / beside, fallback / name, tmp / name]


def trusted_locations(places: list[Path], *, create: bool) -> list[Path]:
    """``cache_locations`` that may be used: the shared temp dir's only when its folder is this
    user's own (made so first when ``create``)."""
    *own, shared = places
    return [*own, *([shared] if _private_dir(shared.parent, create=create) else [])]


def _valid(data: mmap.mmap | bytes, fingerprint: str) -> bool:
    if len(data) < _HEADER.size:
        return False
    magic, version, size, fp, *_, hashing, _, checksum = _HEADER.unpack_from(data, 0)
    if magic != _MAGIC or version != FORMAT_VERSION or size != _HEADER.size:
        return False
    if hashing != _HASHING or sys.byteorder != "little":
        return False
    if fp.rstrip(b"\0").decode(errors="replace") != fingerprint:
        return False
    view = memoryview(data)
    try:
        return _checksum(view[:size], view[size:]) == checksum
    finally:
        view.release()


def _open_cached(path: Path, fingerprint: str) -> mmap.mmap | None:
    try:
        with path.open("rb") as fh:
            data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None
    if _valid(data, fingerprint):
        return data
    data.close()
    return None


def _private_dir(folder: Path, *, create: bool) -> bool:
    """Whether ``folder`` is a folder only this user can write (made so first if ``create``)."""
    if not hasattr(os, "getuid"):
        return True
    try:
        if create:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        st = os.lstat(folder)
    except OSError:
        return False
    return st.st_uid == os.getuid() and not st.st_mode & 0o022 and folder.is_dir()


def write_cache_file(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file beside it, then a rename);
    False when it cannot be written there."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        prefix = f".{path.name.split('.')[0].split('-')[0]}-"
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=prefix, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return True
    except OSError:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        return False


def _reopen(root: Path, path: Path, fingerprint: str) -> RecordingIndex:
    data = _open_cached(path, fingerprint)
    if data is None:
        raise SuiteError(
            "the recordings index changed or is gone; load the suite again", file=str(path)
        )
    return RecordingIndex(root, data, path=path)


def open_index(
    root: str | Path,
    fingerprint: str,
    schemas: Mapping[tuple[str, str], dict[str, Any]],
    *,
    cache_dir: str | Path | None = None,
    cache_size: int = DECODED_CACHE,
) -> RecordingIndex:
    """The suite's index: a valid cached one, else built now and cached where it can be
    written (kept in memory when nowhere can). Raises ``SuiteError`` for a bad line."""
    root = Path(root)
    places = cache_locations(root, fingerprint, cache_dir)
    # The temp dir is shared: only a folder of our own there is trusted (made when written to).
    for place in trusted_locations(places, create=False):
        cached = _open_cached(place, fingerprint)
        if cached is not None:
            return RecordingIndex(root, cached, path=place, cache_size=cache_size)
    data = build_index(root, fingerprint, schemas)
    for place in trusted_locations(places, create=True):
        if write_cache_file(place, data):
            cached = _open_cached(place, fingerprint)
            if cached is not None:
                return RecordingIndex(root, cached, path=place, cache_size=cache_size)
    return RecordingIndex(root, data, cache_size=cache_size)
