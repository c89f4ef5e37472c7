"""``SeededModel``: every request of an episode carries a ``seed`` drawn from the episode and the
request, so a model on a server of the run's own samples the same replies in every run.

A server that samples (llama.cpp, vLLM, SGLang) draws from its own random state when a request
sends no seed: llama.cpp goes on from the seed of its previous request, so the same episode got
other replies when the server had answered other requests before (a probe, another episode, a
drained timeout). The aliases that launch their own server (``launch:``) therefore send
``seed``: a 31-bit number made from the run's seed, the task, the trial, the request (messages
without the made-up ids of tool calls, tools, parameters) and how many times the episode already
sent exactly that request (ReAct@N's chains and DFSDT's resamples ask the same request again and
must get other draws), as ``CachedModel`` keys its answers. A seed the alias or the call sets
itself is sent as it is. Other endpoints get no seed: not every provider takes one, and a
preset's requests are sent as its client sends them. May import ``agents`` and
``sandbox.models.cache`` only.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict
from typing import Any

from agents.model import Message, Model, Turn
from sandbox.models.cache import EpisodeIdentity, request_key

__all__ = ["SEED_BITS", "SeededModel"]

SEED_BITS = 31
"""Seeds are below 2**31: every server takes a non-negative 32-bit signed integer."""


def _without_ids(messages: list[Message]) -> list[Message]:
    """The messages without the ids of tool calls: servers make them up at random (llama.cpp's
    hold a fresh uuid), so the same turn would otherwise seed its next request anew each run."""
    out: list[Message] = []
    for m in messages:
        m = {k: v for k, v in m.items() if k != "tool_call_id"}
        calls = m.get("tool_calls")
        if isinstance(calls, list):
            m["tool_calls"] = [
                {k: v for k, v in c.items() if k != "id"} if isinstance(c, dict) else c
                for c in calls
            ]
        out.append(m)
    return out


class SeededModel:
    """A model whose requests carry the episode's seed (see the module docstring)."""

    def __init__(self, inner: Model, *, episode: EpisodeIdentity) -> None:
        self.inner = inner
        self.episode = episode
        self.name = inner.name
        self.params: dict[str, Any] = dict(getattr(inner, "params", None) or {})
        """The wrapped model's request parameters (what a trajectory records of the model)."""
        self._asked: dict[str, int] = {}

    def seed_for(
        self, messages: list[Message], tools: list[dict[str, Any]], params: dict[str, Any]
    ) -> int:
        """The seed of this request: the episode, the request, and its count so far."""
        request = request_key("", _without_ids(messages), tools, params)
        sample = self._asked.get(request, 0)
        self._asked[request] = sample + 1
        key = {"episode": asdict(self.episode), "request": request, "n": sample}
        text = json.dumps(key, sort_keys=True, separators=(",", ":"))
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") % (1 << SEED_BITS)

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        params = dict(params or {})
        if "seed" not in params and "seed" not in self.params:
            params["seed"] = self.seed_for(messages, tools, params)
        return await self.inner.complete(messages, tools, params)
