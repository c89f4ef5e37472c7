"""The overlay: responses made at run time (simulated or fetched upstream), kept beside a suite.

A suite's own files never change while it is served, so its fingerprint holds and runs can be
resumed; what the miss policies produce goes here instead, in a SQLite file (by default
``<suite>/overlay.sqlite``). Lookup order is the suite's recordings, then the overlay, then the
miss policy. The first answer stored for a call wins (``INSERT OR IGNORE``): two processes that
miss the same call at once both serve the one that was stored, and a process that claims a miss
(``claim``) is the only one to answer it while it lives: the others wait for its answer, so the
server processes of ``serve --workers`` make one simulation per distinct miss. WAL mode lets
several processes read and write one overlay. ``sandbox suite freeze`` turns the overlay into
recordings. An answer made after a write history (``mock_tools.history``) is kept under the
history and the call: its ``key`` column holds ``<history>\x1e<canonical key>`` (a canonical key
is a JSON object, so it starts with ``{``), which ``recordings`` splits back.
Imports the suite, store, models and errors modules of ``mock_tools``.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sqlite3
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from mock_tools.errors import MockToolsError
from mock_tools.models import Provenance, Recording, Response
from mock_tools.store import RecordingStore, RecordingWriter
from mock_tools.suite import load_suite

__all__ = [
    "OVERLAY_FILE",
    "RECORDINGS_FILE_NAME",
    "OverlayStore",
    "check_recordings_name",
    "freeze",
]

OVERLAY_FILE = "overlay.sqlite"
"""The overlay's default name inside a suite folder (outside the fingerprinted files)."""

RECORDINGS_FILE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@+=-]{0,121}\.jsonl$")
"""What ``freeze`` may name its file: a plain ``*.jsonl`` name that the suite loader reads
(``recordings/*.jsonl``), never a path: letters, digits and ``. _ @ + = -``, starting with a
letter or digit, 128 characters at most."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    tool TEXT NOT NULL,
    api TEXT NOT NULL,
    key TEXT NOT NULL,
    response TEXT NOT NULL,
    provenance TEXT NOT NULL,
    PRIMARY KEY (tool, api, key)
)
"""
_CLAIMS = """
CREATE TABLE IF NOT EXISTS claims (
    tool TEXT NOT NULL,
    api TEXT NOT NULL,
    key TEXT NOT NULL,
    pid INTEGER NOT NULL,
    claimed_at REAL NOT NULL,
    PRIMARY KEY (tool, api, key)
)
"""
CLAIM_TIMEOUT = 600.0
"""Seconds after which a claim is taken over even if its process lives (a hung miss policy)."""


class OverlayStore:
    """Responses by ``(tool, api, canonical key)``, first writer wins."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        # One connection, used from the event loop and from worker threads: one at a time.
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.execute(_CLAIMS)
            self._db.commit()
        except (OSError, sqlite3.DatabaseError) as e:
            raise MockToolsError(f"{self.path}: cannot open the overlay: {e}") from e

    def get(
        self, tool: str, api: str, key: str, *, history: str | None = None
    ) -> tuple[Response, Provenance] | None:
        with self._lock:
            row = self._db.execute(
                "SELECT response, provenance FROM responses WHERE tool = ? AND api = ? AND key = ?",
                (tool, api, _stored_key(key, history)),
            ).fetchone()
        if row is None:
            return None
        return Response.model_validate_json(row[0]), Provenance.model_validate_json(row[1])

    def put(
        self,
        tool: str,
        api: str,
        key: str,
        response: Response,
        provenance: Provenance,
        *,
        history: str | None = None,
    ) -> tuple[Response, Provenance]:
        """Store an answer (made after ``history``) unless one is there already; return the
        stored one."""
        if provenance.recorded_at is None:
            provenance = provenance.model_copy(update={"recorded_at": datetime.now(timezone.utc)})
        try:
            with self._lock:
                self._db.execute(
                    "INSERT OR IGNORE INTO responses VALUES (?, ?, ?, ?, ?)",
                    (
                        tool,
                        api,
                        _stored_key(key, history),
                        response.model_dump_json(),
                        provenance.model_dump_json(),
                    ),
                )
                self._db.commit()
        except sqlite3.DatabaseError as e:
            raise MockToolsError(f"{self.path}: cannot write to the overlay: {e}") from e
        stored = self.get(tool, api, key, history=history)
        assert stored is not None
        return stored

    def claim(self, tool: str, api: str, key: str, *, history: str | None = None) -> bool:
        """Become the one process that answers this miss (True), unless a live process of this
        machine claimed it less than ``CLAIM_TIMEOUT`` seconds ago (False: wait for its answer
        with ``get``). Server processes sharing the overlay (``serve --workers``) so make one
        answer per distinct miss; ``release`` when done, answered or not."""
        now, me = time.time(), os.getpid()
        key = _stored_key(key, history)
        try:
            with self._lock:
                row = self._db.execute(
                    "SELECT pid, claimed_at FROM claims WHERE tool = ? AND api = ? AND key = ?",
                    (tool, api, key),
                ).fetchone()
                held = row is not None and row[0] != me and now - row[1] < CLAIM_TIMEOUT
                if held and _alive(row[0]):
                    return False
                # Taking over compares what was read: of two processes, one replaces it.
                cursor = self._db.execute(
                    "INSERT INTO claims VALUES (?, ?, ?, ?, ?) ON CONFLICT (tool, api, key) "
                    "DO UPDATE SET pid = excluded.pid, claimed_at = excluded.claimed_at "
                    "WHERE pid = ? AND claimed_at = ?",
                    (tool, api, key, me, now, *(row or (None, None))),
                )
                self._db.commit()
                return cursor.rowcount == 1
        except sqlite3.DatabaseError as e:
            raise MockToolsError(f"{self.path}: cannot write to the overlay: {e}") from e

    def release(self, tool: str, api: str, key: str, *, history: str | None = None) -> None:
        """Give a claim of this process up (its answer, if any, is stored already)."""
        with contextlib.suppress(sqlite3.DatabaseError), self._lock:
            self._db.execute(
                "DELETE FROM claims WHERE tool = ? AND api = ? AND key = ? AND pid = ?",
                (tool, api, _stored_key(key, history), os.getpid()),
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def recordings(self) -> Iterator[Recording]:
        """Every entry as a ``Recording`` (canonical arguments), in key order."""
        with self._lock:
            rows = self._db.execute(
                "SELECT tool, api, key, response, provenance FROM responses ORDER BY tool, api, key"
            ).fetchall()
        for tool, api, stored, response, provenance in rows:
            history, key = _split_key(stored)
            yield Recording(
                tool=tool,
                api=api,
                args=json.loads(key),
                response=Response.model_validate_json(response),
                provenance=Provenance.model_validate_json(provenance),
                history=history,
            )

    def fingerprint(self) -> str:
        """sha256 over the entries in key order: what the overlay held at a point in time."""
        digest = hashlib.sha256()
        with self._lock:
            rows = self._db.execute(
                "SELECT tool, api, key, response FROM responses ORDER BY tool, api, key"
            ).fetchall()
        for row in rows:
            digest.update("\0".join(row).encode("utf-8"))
            digest.update(b"\n")
        return "sha256:" + digest.hexdigest()

    def close(self) -> None:
        with self._lock:
            self._db.close()


_HISTORY_END = "\x1e"


def _stored_key(key: str, history: str | None) -> str:
    """The ``key`` column of a call made after ``history``."""
    return key if history is None else f"{history}{_HISTORY_END}{key}"


def _split_key(stored: str) -> tuple[str | None, str]:
    """The history (None: the empty one) and the canonical key of a ``key`` column."""
    if stored.startswith("{"):
        return None, stored
    history, _, key = stored.partition(_HISTORY_END)
    return history, key


def _alive(pid: int) -> bool:
    """Whether a process ``pid`` runs on this machine (a claim of a dead one is stale)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # it exists, owned by someone else
        return True
    return True


def freeze(
    suite_dir: str | Path, overlay: OverlayStore, *, name: str | None = None
) -> dict[str, Any]:
    """Write the overlay's entries that the suite does not record yet into a new recordings
    file of the suite (provenance kept); returns what was written where.

    The suite's fingerprint changes (it has new recordings): that is the point, a frozen suite
    serves every one of those calls as a recording, with no simulator or upstream.
    """
    if name is not None:
        check_recordings_name(name)
    suite = load_suite(suite_dir)
    store = RecordingStore.from_suite(suite)
    fresh = [
        r
        for r in overlay.recordings()
        if store.get(r.tool, r.api, store.key(r.tool, r.api, r.args), history=r.history) is None
    ]
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    target = Path(suite_dir) / "recordings" / (name or f"frozen-{stamp}.jsonl")
    if fresh:
        if target.exists():
            raise MockToolsError(f"{target} exists already; choose another name")
        with RecordingWriter(target) as writer:
            for rec in fresh:
                writer.append(rec)
    return {
        "suite": str(suite_dir),
        "overlay": str(overlay.path),
        "overlay_entries": len(overlay),
        "written": len(fresh),
        "already_recorded": len(overlay) - len(fresh),
        "file": str(target) if fresh else None,
    }


def check_recordings_name(name: str) -> None:
    """``MockToolsError`` unless ``name`` is a file name ``freeze`` may write in a suite's
    ``recordings/`` folder (``RECORDINGS_FILE_NAME``): a path would write outside the suite or
    into a subfolder the loader never reads."""
    if not RECORDINGS_FILE_NAME.fullmatch(name) or name != Path(name).name:
        raise MockToolsError(
            f"{name!r} is not a recordings file name: give a plain name ending in .jsonl "
            "(letters, digits and . _ @ + = -, starting with a letter or digit, at most 128 "
            "characters); the file goes into the suite's recordings/ folder"
        )
