"""A SQLite cache of model answers, keyed by the sha256 of the full request, and ``CachedModel``.

The key covers the model's identity, the messages, the tools and every request parameter (the
judge's sample index included), so a cached answer is only ever reused for exactly the same
request. It is on for the LLM judge (re-scoring a run with the same judge is free and gives the
same labels) and opt-in for agents (``sandbox run --model-cache PATH``: a re-run against a remote
model is free and exact; ``CachedModel`` wraps the model). May import ``agents`` and
``sandbox.errors`` only.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

from agents.model import Message, Model, Turn
from sandbox.errors import RunError

__all__ = ["CachedModel", "RequestCache", "request_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    response TEXT NOT NULL
)
"""


def request_key(
    model: str, messages: list[dict[str, Any]], tools: list[dict[str, Any]], params: dict[str, Any]
) -> str:
    """sha256 of the canonical JSON of the whole request."""
    payload = {"model": model, "messages": messages, "tools": tools, "params": params}
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RequestCache:
    """``get``/``put`` JSON responses by request key. ``path=":memory:"`` keeps it in memory."""

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self._db = sqlite3.connect(self.path)
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as e:
            raise RunError(f"model cache {self.path} is not usable: {e}") from e

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT response FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO answers (key, model, response) VALUES (?, ?, ?)",
            (key, model, json.dumps(response, sort_keys=True)),
        )
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        self._db.close()


class CachedModel:
    """A model behind a ``RequestCache``: the same request is answered once, then from the cache.

    Cached turns keep their recorded usage, so budgets behave as in the first run; ``raw`` marks
    them as hits.
    """

    def __init__(self, inner: Model, cache: RequestCache, *, identity: str) -> None:
        """``identity`` names what answers (model, endpoint, parameters) for the cache key."""
        self.inner = inner
        self.cache = cache
        self.identity = identity
        self.name = inner.name
        self.hits = 0
        self.misses = 0

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        key = request_key(self.identity, messages, tools, params or {})
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            turn = Turn.model_validate(cached)
            return turn.model_copy(update={"latency_ms": 0.0, "raw": {"cache": "hit"}})
        turn = await self.inner.complete(messages, tools, params)
        self.misses += 1
        self.cache.put(key, self.identity, turn.model_dump(mode="json", exclude={"raw"}))
        return turn

    async def probe(self) -> Any:
        """The wrapped client's endpoint probe (None when it has none)."""
        probe = getattr(self.inner, "probe", None)
        return await probe() if probe is not None else None

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
        self.cache.close()
