"""The LLM judge: ToolEval's functions asked with a forced ``tool_choice``, through the model
layer, behind a request cache.

``Judge.ask(function, fields, index=...)`` sends one request, as ToolEval's
``function_call`` does (``registered_cls/tooleval.py``): a single user message (the function's
prompt, ``tooleval_functions.prompt_for``), the one function offered (``tools``) and
``tool_choice`` forcing it, at the judge's temperature (ToolEval's 0.2 by default). The reply is
the call's arguments, checked by ``tooleval_functions.valid_reply``:

- a reply that does not parse or does not answer (no call, another function, a value outside
  the enum, a strict JSON object in plain content being the one exception that is accepted) is
  asked again, up to ``attempts`` times in all (ToolEval's ``stop_after_attempt(3)``), then it is
  a ``JudgeError``: an infrastructure error of the evaluation, reported apart, never a label;
- a failure of the endpoint that survives the model layer's retries is a ``JudgeError`` too.

Samples: ``index`` (a pass-rate sample, or a preference round) is sent as the request's ``seed``
(so a seeded server answers each sample independently and reproducibly) and, with it, keys the
cache: re-evaluating with the same judge makes no call. A retry after an invalid reply changes
the seed (``index + attempt * ATTEMPT_SEED_STRIDE``) and is cached only once it is valid.
``usage`` counts the judge's calls, cache hits, invalid replies, tokens and cost
(``turn.usage.cost``: the model layer prices the judge model), apart from the agents'.
May import ``sandbox.models`` (the cache) and ``eval`` modules.
"""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from pydantic import BaseModel

from agents.errors import ModelError
from agents.model import Message, Model, Turn
from sandbox.errors import SandboxError
from sandbox.eval.tooleval_functions import prompt_for, tool_for, valid_reply
from sandbox.models.cache import RequestCache, request_key

__all__ = [
    "ATTEMPT_SEED_STRIDE",
    "DEFAULT_ATTEMPTS",
    "DEFAULT_TEMPERATURE",
    "Judge",
    "JudgeError",
    "JudgeUsage",
    "reply_arguments",
]

DEFAULT_TEMPERATURE = 0.2
"""ToolEval's ``completions_kwargs.temperature`` (ToolBench's default evaluator)."""
DEFAULT_ATTEMPTS = 3
"""ToolEval's ``@retry(stop=stop_after_attempt(3))`` on ``function_call``."""
ATTEMPT_SEED_STRIDE = 1_000_000
DEFAULT_CONCURRENCY = 4

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


class JudgeError(SandboxError):
    """The judge could not give an answer (endpoint down, or invalid replies after retries): an
    infrastructure error of the evaluation, never a label."""


class JudgeUsage(BaseModel):
    """The judge's own consumption, reported apart from the agents'."""

    model: str
    calls: int = 0
    cache_hits: int = 0
    invalid_replies: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


def reply_arguments(turn: Turn, function: str) -> dict[str, Any] | None:
    """The arguments the reply gives ``function``: its tool call's, or, from a server that
    ignored ``tool_choice``, a content that is exactly one JSON object. None otherwise."""
    for call in turn.tool_calls:
        if call.name == function:
            try:
                return call.parsed_args()
            except ValueError:
                return None
    if turn.tool_calls:
        return None
    text = _FENCE.sub("", (turn.content or "").strip())
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


class Judge:
    """A judge model (any ``Model``, e.g. ``sandbox.models.remote.openai_client(spec)``) with an
    optional ``RequestCache``."""

    def __init__(
        self,
        model: Model,
        *,
        cache: RequestCache | None = None,
        temperature: float = DEFAULT_TEMPERATURE,
        attempts: int = DEFAULT_ATTEMPTS,
        concurrency: int = DEFAULT_CONCURRENCY,
    ) -> None:
        if attempts < 1 or concurrency < 1:
            raise ValueError("attempts and concurrency must be at least 1")
        self.model = model
        self.cache = cache
        self.temperature = temperature
        self.attempts = attempts
        self.usage = JudgeUsage(model=model.name)
        self._limit = asyncio.Semaphore(concurrency)

    async def ask(
        self,
        function: str,
        fields: dict[str, str],
        *,
        index: int = 0,
        reason: bool = False,
        choices: int = 2,
    ) -> dict[str, Any]:
        """``function``'s answer about ``fields`` (normalised arguments of the forced call).

        ``index`` is the sample (or round): it is the request's seed. Raises ``JudgeError``.
        """
        messages: list[Message] = [{"role": "user", "content": prompt_for(function, **fields)}]
        tools = [tool_for(function, reason=reason)]
        for attempt in range(self.attempts):
            params: dict[str, Any] = {
                "temperature": self.temperature,
                "seed": index + attempt * ATTEMPT_SEED_STRIDE,
                "tool_choice": {"type": "function", "function": {"name": function}},
            }
            key = request_key(self.model.name, messages, tools, params)
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                self.usage.cache_hits += 1
                return dict(cached["arguments"])
            turn = await self._complete(messages, tools, params)
            args = reply_arguments(turn, function)
            reply = valid_reply(function, args, choices=choices) if args is not None else None
            if reply is not None:
                if self.cache is not None:
                    self.cache.put(key, self.model.name, {"arguments": reply})
                return reply
            self.usage.invalid_replies += 1
        self.usage.errors += 1
        raise JudgeError(
            f"judge {self.model.name!r} gave no valid {function} reply in {self.attempts} attempts"
        )

    async def _complete(
        self, messages: list[Message], tools: list[dict[str, Any]], params: dict[str, Any]
    ) -> Turn:
        async with self._limit:
            try:
                turn = await self.model.complete(messages, tools, params)
            except ModelError as e:
                self.usage.errors += 1
                raise JudgeError(f"judge model {self.model.name!r} failed: {e}") from e
        self.usage.calls += 1
        self.usage.prompt_tokens += turn.usage.prompt_tokens
        self.usage.completion_tokens += turn.usage.completion_tokens
        self.usage.cost += turn.usage.cost
        return turn
