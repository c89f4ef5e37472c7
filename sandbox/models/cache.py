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
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from agents.errors import CONTEXT_LENGTH, REPLY_TOO_LARGE, ModelError
from agents.model import Message, Model, Turn
from sandbox.errors import RunError

__all__ = [
    "CACHED_ERROR",
    "MODEL_OUTCOME_ERRORS",
    "CachedModel",
    "EpisodeIdentity",
    "RequestCache",
    "request_key",
]

MODEL_OUTCOME_ERRORS = frozenset({CONTEXT_LENGTH, REPLY_TOO_LARGE})
"""Kinds of ``ModelError`` that are the endpoint's answer to the request, not a failure of it
(a history longer than the context, a reply over the cap): cached like a turn, so a re-run from
the cache ends the episode as the first run did. Failures of the endpoint (5xx, timeouts...) are
never cached: a re-run asks again."""
CACHED_ERROR = "model_error"
"""The key of a cached answer that is a ``ModelError`` (``{"kind", "message"}``)."""

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
            self._db = sqlite3.connect(self.path, timeout=30.0)
            # Several processes may share one cache (runs of a comparison, a judge): WAL lets
            # readers and one writer work at once; the timeout waits out another writer.
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(_SCHEMA)
            self._db.commit()
        except sqlite3.DatabaseError as e:
            raise RunError(f"model cache {self.path} is not usable: {e}") from e

    def get(self, key: str) -> dict[str, Any] | None:
        row = self._db.execute("SELECT response FROM answers WHERE key = ?", (key,)).fetchone()
        return json.loads(row[0]) if row else None

    def put(self, key: str, model: str, response: dict[str, Any]) -> None:
        self._db.execute(
            "INSERT OR IGNORE INTO answers (key, model, response) VALUES (?, ?, ?)",
            (key, model, json.dumps(response, sort_keys=True)),
        )
        self._db.commit()

    def __len__(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        self._db.close()


@dataclass(frozen=True)
class EpisodeIdentity:
    """Which episode asks: the part of a cache key that makes samples of a run differ."""

    seed: int
    task: str
    trial: int


class CachedModel:
    """A model behind a ``RequestCache``, one instance per episode.

    The key of a request is the model's identity (model, tool-call mode, sampling parameters),
    the episode (run seed, task, trial), the messages, the tools, the call's parameters, and how
    many times this episode already asked exactly this request (ReAct@N's chains, a search
    resampling the same node). So a re-run gets exactly the turns it got before, while trials,
    chains and resamples stay independent draws whatever the concurrency. Cached turns keep
    their recorded usage (budgets behave as in the first run); ``raw`` marks them as hits. An
    error that is the model's outcome (``MODEL_OUTCOME_ERRORS``: a context overflow) is cached
    too and raised again.

    ``first_miss`` runs once per run before the first request that is not cached (the endpoint
    probe), so a run whose every answer is cached needs no endpoint at all.
    """

    def __init__(
        self,
        inner: Model,
        cache: RequestCache,
        *,
        identity: str,
        episode: EpisodeIdentity | None = None,
        first_miss: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.inner = inner
        self.cache = cache
        self.identity = identity
        self.episode = episode
        self.first_miss = first_miss
        self.name = inner.name
        self.params: dict[str, Any] = dict(getattr(inner, "params", None) or {})
        """The wrapped model's request parameters (what a trajectory records of the model)."""
        self.hits = 0
        self.misses = 0
        self._asked: dict[str, int] = {}

    def key(
        self, messages: list[Message], tools: list[dict[str, Any]], params: dict[str, Any]
    ) -> str:
        base = request_key(self.identity, messages, tools, params)
        sample = self._asked.get(base, 0)
        self._asked[base] = sample + 1
        where = None if self.episode is None else asdict(self.episode)
        return request_key(self.identity, [], [], {"request": base, "episode": where, "n": sample})

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        key = self.key(messages, tools, params or {})
        cached = self.cache.get(key)
        if cached is not None:
            self.hits += 1
            error = cached.get(CACHED_ERROR)
            if isinstance(error, dict):
                raise ModelError(str(error.get("message", "")), kind=str(error.get("kind")))
            turn = Turn.model_validate(cached)
            return turn.model_copy(update={"latency_ms": 0.0, "raw": {"cache": "hit"}})
        if self.first_miss is not None:
            await self.first_miss()
        try:
            turn = await self.inner.complete(messages, tools, params)
        except ModelError as e:
            self.misses += 1
            if e.kind in MODEL_OUTCOME_ERRORS:  # the model's answer to this request: kept
                answer = {CACHED_ERROR: {"kind": e.kind, "message": str(e)}}
                self.cache.put(key, self.identity, answer)
            raise
        self.misses += 1
        self.cache.put(key, self.identity, turn.model_dump(mode="json", exclude={"raw"}))
        return turn
