"""The LLM judge: ToolEval's functions asked with a forced ``tool_choice``, through the model
layer, behind a request cache.

``Judge.ask(function, fields, index=...)`` sends one request, as ToolEval's
``function_call`` does (``registered_cls/tooleval.py``): a single user message (the function's
prompt, ``tooleval.functions.prompt_for``), the one function offered (``tools``) and
``tool_choice`` forcing it, at the judge's temperature (ToolEval's 0.2 by default). The reply is
the call's arguments, checked by ``tooleval.functions.valid_reply``:

- a reply that does not parse or does not answer (no call, another function, a value outside
  the enum, a strict JSON object in plain content being the one exception that is accepted) is
  asked again, up to ``attempts`` times in all (ToolEval's ``stop_after_attempt(3)``), then it is
  a ``JudgeError``: an infrastructure error of the evaluation, reported apart, never a label;
- a failure of the endpoint that survives the model layer's retries is a ``JudgeError`` too;
- a configuration error of the endpoint (a refused key, an unknown model) stops the evaluation:
  ``EndpointConfigError`` (exit 2), since no question could be answered.

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
from collections.abc import Callable
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, Field

from agents.errors import ModelError
from agents.model import Message, Model, Turn
from sandbox.errors import EndpointConfigError, SandboxError
from sandbox.eval.tooleval.functions import prompt_for, tool_for, valid_reply
from sandbox.models.cache import RequestCache, request_key

__all__ = [
    "ATTEMPT_SEED_STRIDE",
    "DEFAULT_ATTEMPTS",
    "DEFAULT_TEMPERATURE",
    "RULES_JUDGE",
    "Judge",
    "JudgeError",
    "JudgeKind",
    "JudgeUsage",
    "json_object",
    "judge_text",
    "reply_arguments",
]

DEFAULT_TEMPERATURE = 0.2
"""ToolEval's ``completions_kwargs.temperature`` (ToolBench's default evaluator)."""
DEFAULT_ATTEMPTS = 3
"""ToolEval's ``@retry(stop=stop_after_attempt(3))`` on ``function_call``."""
ATTEMPT_SEED_STRIDE = 1_000_000
DEFAULT_CONCURRENCY = 4
RULES_JUDGE = "rules-judge"
"""The offline judge that answers from the task's checks (``tooleval.rules_judge``)."""

JudgeKind = Literal["llm", "rules"]
"""``llm``: a model answers; ``rules``: ``rules-judge``, deterministic rules, not an LLM."""

T = TypeVar("T")

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.IGNORECASE)


class JudgeError(SandboxError):
    """The judge could not give an answer (endpoint down, or invalid replies after retries): an
    infrastructure error of the evaluation, never a label."""


class JudgeUsage(BaseModel):
    """The judge's own consumption, reported apart from the agents'."""

    model: str
    kind: JudgeKind = Field(
        default="llm", description="llm, or rules: rules-judge, which is not an LLM."
    )
    calls: int = 0
    cache_hits: int = 0
    invalid_replies: int = 0
    errors: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0


def judge_text(usage: JudgeUsage) -> str:
    """The judge as every output names it: a rules judge says it is not an LLM."""
    if usage.kind == "rules":
        return f"{usage.model} (rules from the task's checks, not an LLM)"
    return usage.model


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


def json_object(text: str) -> dict[str, Any] | None:
    """The one JSON object a reply holds: the whole text (a Markdown fence aside), else the
    span from its first ``{`` to its last ``}`` (a small model's prose around it). None when
    there is none."""
    text = _FENCE.sub("", text.strip())
    for candidate in (text, text[text.find("{") : text.rfind("}") + 1]):
        try:
            value = json.loads(candidate)
        except ValueError:
            continue
        if isinstance(value, dict):
            return value
    return None


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
        kind: JudgeKind = "llm",
    ) -> None:
        if attempts < 1 or concurrency < 1:
            raise ValueError("attempts and concurrency must be at least 1")
        self.model = model
        self.cache = cache
        self.temperature = temperature
        self.attempts = attempts
        self.usage = JudgeUsage(model=model.name, kind=kind)
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

    async def ask_json(
        self,
        messages: list[Message],
        check: Callable[[dict[str, Any]], T | None],
        *,
        what: str,
        temperature: float | None = None,
        index: int = 0,
    ) -> T:
        """A free-form question (``messages``, no tools) whose reply is one JSON object that
        ``check`` accepts (it returns what the caller keeps, or None for an invalid reply):
        cached, asked again on an invalid reply and failing as ``ask`` does (``JudgeError``;
        ``EndpointConfigError`` for a refused configuration). ``temperature`` overrides the
        judge's own (a question that fixes its own, as τ²'s NL assertions do at 0)."""
        for attempt in range(self.attempts):
            params: dict[str, Any] = {
                "temperature": self.temperature if temperature is None else temperature,
                "seed": index + attempt * ATTEMPT_SEED_STRIDE,
            }
            key = request_key(self.model.name, messages, [], params)
            cached = self.cache.get(key) if self.cache is not None else None
            if cached is not None:
                kept = check(dict(cached["arguments"]))
                if kept is not None:
                    self.usage.cache_hits += 1
                    return kept
            turn = await self._complete(messages, [], params)
            reply = json_object(turn.content or "")
            kept = check(reply) if reply is not None else None
            if kept is not None:
                if self.cache is not None and reply is not None:
                    self.cache.put(key, self.model.name, {"arguments": reply})
                return kept
            self.usage.invalid_replies += 1
        self.usage.errors += 1
        raise JudgeError(
            f"judge {self.model.name!r} gave no valid {what} reply in {self.attempts} attempts"
        )

    async def _complete(
        self, messages: list[Message], tools: list[dict[str, Any]], params: dict[str, Any]
    ) -> Turn:
        async with self._limit:
            try:
                turn = await self.model.complete(messages, tools, params)
            except ModelError as e:
                self.usage.errors += 1
                if e.configuration:  # a refused key or model: no question can be answered
                    raise EndpointConfigError(
                        f"the judge {self.model.name!r} refused the configuration ({e.kind}): {e}"
                    ) from e
                raise JudgeError(f"judge model {self.model.name!r} failed: {e}") from e
        self.usage.calls += 1
        self.usage.prompt_tokens += turn.usage.prompt_tokens
        self.usage.completion_tokens += turn.usage.completion_tokens
        self.usage.cost += turn.usage.cost
        return turn
