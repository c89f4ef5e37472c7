"""The YAML documents of a suite, cached by its fingerprint: a suite loads without YAML parsing.

Parsing YAML is most of the time of loading a large suite (a 2,000-task file takes seconds with
libyaml; the models validate the same documents in a fraction of that). ``load_suite`` keeps
what it read (``suite.yaml``'s document, then each file of ``tools/`` and ``tasks/`` with its
documents) in ``<suite>/.cache/suite-docs.json``, beside the recording index and with its
fallbacks when the folder cannot be written (``recording_index.cache_locations``: the cache dir,
then a private folder in the temp dir). The next load with the same fingerprint validates those
documents with the same models and the same checks, so it makes the same objects and raises
the same errors; only the YAML is skipped.

A file is used only when its first line names this format, a digest of the code that reads
suites (this module, the models, the loader, the YAML reader; pydantic's version) and the
suite's fingerprint, and the rest matches the checksum on that line. Documents that JSON cannot
carry exactly (dates, non-text keys, numbers orjson cannot write) are never cached: such a suite
is read from its YAML every time. Imports ``recording_index`` (where caches go) only.
"""

from __future__ import annotations

import hashlib
import math
from functools import lru_cache
from pathlib import Path
from typing import Any

import orjson

from mock_tools.recording_index import cache_locations, trusted_locations, write_cache_file

__all__ = ["CACHE_NAME", "SuiteDocs", "cached_docs", "store_docs"]

CACHE_NAME = "suite-docs.json"
FORMAT = "agent-sandbox/suite-docs@1"
_READERS = ("suite_cache.py", "models.py", "suite.py", "yaml_text.py")

SuiteDocs = dict[str, Any]
"""``{"meta": document, "tools": [[file name, [[index or null, document], ...]], ...],
"tasks": [...]}``: what ``load_suite`` read, in the order it read it."""


@lru_cache(maxsize=1)
def _code_digest() -> str:
    import pydantic

    h = hashlib.sha256(pydantic.VERSION.encode())
    here = Path(__file__)
    for name in _READERS:
        h.update(here.with_name(name).read_bytes())
    return h.hexdigest()[:32]


def _header(fingerprint: str, body: bytes) -> bytes:
    checksum = hashlib.blake2b(body, digest_size=16).hexdigest()
    return f"{FORMAT} {_code_digest()} {fingerprint} {checksum}\n".encode()


def _plain(value: Any) -> bool:
    """Whether JSON carries ``value`` exactly (iteratively: any depth is safe)."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if not all(type(k) is str for k in item):
                return False
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, float):
            if not math.isfinite(item):
                return False
        elif isinstance(item, bool) or item is None or type(item) is str:
            continue
        elif type(item) is int:
            if not -(2**63) <= item < 2**64:
                return False
        else:
            return False
    return True


def cached_docs(root: Path, fingerprint: str, cache_dir: str | Path | None) -> SuiteDocs | None:
    """The documents cached for this suite and fingerprint, or None."""
    for place in trusted_locations(_places(root, fingerprint, cache_dir), create=False):
        try:
            data = place.read_bytes()
        except OSError:
            continue
        head, _, body = data.partition(b"\n")
        if head + b"\n" != _header(fingerprint, body):
            continue
        try:
            docs = orjson.loads(body)
        except orjson.JSONDecodeError:
            continue
        if isinstance(docs, dict):
            return docs
    return None


def store_docs(
    root: Path, fingerprint: str, cache_dir: str | Path | None, docs: SuiteDocs
) -> Path | None:
    """Cache ``docs`` for this suite (the first place that can be written); where it went, or
    None when the documents cannot be carried exactly or nowhere can be written."""
    if not _plain(docs):
        return None
    try:
        body = orjson.dumps(docs)
    except orjson.JSONEncodeError:
        return None
    data = _header(fingerprint, body) + body
    for place in trusted_locations(_places(root, fingerprint, cache_dir), create=True):
        if write_cache_file(place, data):
            return place
    return None


def _places(root: Path, fingerprint: str, cache_dir: str | Path | None) -> list[Path]:
    return cache_locations(root, fingerprint, cache_dir, beside=CACHE_NAME)
