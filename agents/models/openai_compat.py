"""A ``Model`` over any OpenAI-compatible chat endpoint (OpenAI, vLLM, SGLang, llama.cpp, Ollama).

Native tool calls. A reply the endpoint cut at ``max_tokens`` (``finish_reason: "length"``) with
no tool call comes back with a ``format_error`` saying so, so the loop counts it as an unusable
turn and tells the model, instead of taking the cut text for a thought. Transient failures (429,
5xx, timeouts, connection errors) are retried with exponential backoff and jitter, honouring
``Retry-After`` (timeouts not, when the policy says so: ``RetryPolicy.retry_timeouts``); what is
left after the retries is raised as ``ModelError`` with its ``kind`` and ``attempts``, so the loop
records an infrastructure error, never an agent mistake. Exceptions of the client library are
translated in ``openai_errors``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai

from agents.errors import ModelError, ModelUnreachable
from agents.model import CUT_AT_TOKEN_LIMIT, Message, ToolCall, Turn, Usage
from agents.models import lean_transport
from agents.models.chat_request import WireShape
from agents.models.completion_body import checked_completion
from agents.models.message_shapes import MessageShape, to_toolbench_messages
from agents.models.openai_errors import EndpointError, translate_openai_error
from agents.models.reply_limit import (
    DEFAULT_MAX_REPLY_BYTES,
    REPLY_TOO_LARGE,
    cap_replies,
    reply_too_large,
)
from agents.models.retry import RetryPolicy, call_with_retries
from agents.models.sendable import sendable

NO_API_KEY = "not-needed"
"""Sent when no key is given: local servers ignore it, the client library insists on one."""

_TOOL_MESSAGE_KEYS = ("role", "content", "tool_call_id")
_ASSISTANT_KEYS = ("role", "content", "tool_calls")


def to_openai_messages(messages: list[Message]) -> list[Message]:
    """The history in the strict shape every OpenAI-compatible server accepts: no empty
    ``tool_calls`` arrays, no bookkeeping keys (``name`` on tool results, a streamed call's
    ``index``, a reply's ``refusal`` or ``function_call``) that some servers reject, and an
    assistant turn's ``content`` always a string, ``""`` when it only called functions (an
    agent behind the proxy echoes a reply's ``content: null``, or leaves it out: llama-cpp-python's
    server answers either with HTTP 500)."""
    out: list[Message] = []
    for m in messages:
        role = m.get("role")
        if role == "tool":
            msg = {k: m[k] for k in _TOOL_MESSAGE_KEYS if k in m}
            msg["content"] = msg.get("content") or ""
        elif role == "assistant":
            msg = {k: m[k] for k in _ASSISTANT_KEYS if k in m}
            msg["content"] = msg.get("content") or ""
            calls = msg.pop("tool_calls", None)
            if calls:
                msg["tool_calls"] = [_strict_call(c) for c in calls]
        else:
            msg = dict(m)
        out.append(msg)
    return out


def _strict_call(call: Any) -> Any:
    """A tool call of an assistant turn as OpenAI defines it: ``id``, ``type``, ``function``
    (``name``, ``arguments``); anything else is left as it came, for the server to judge."""
    if not isinstance(call, dict) or not isinstance(call.get("function"), dict):
        return call
    function = {k: call["function"][k] for k in ("name", "arguments") if k in call["function"]}
    strict = {k: call[k] for k in ("id", "type") if k in call}
    return {**strict, "type": call.get("type") or "function", "function": function}


class OpenAICompatModel:
    """``Model`` backed by ``openai.AsyncOpenAI(base_url=...)``.

    ``params`` are request defaults (``temperature``, ``max_tokens``, ``seed``...) that a call's
    own ``params`` override. Prices are USD per token (``price_cached_prompt`` for prompt tokens
    the provider read from its cache); ``cost`` stays 0 when they are not given.
    ``http_client`` (an ``AsyncClient`` of the HTTP library the ``openai`` package uses) is the
    seam for tests. ``latency_ms`` of a turn is the wall time of the call, retries included.
    ``message_shape``: the history as OpenAI's strict shape, or as ToolBench's client sends it
    (``agents.models.message_shapes``). ``max_reply_bytes`` caps each completion's body
    (``agents.models.reply_limit``): a longer one is a ``ModelError`` of kind
    ``reply_too_large``.
    """

    def __init__(
        self,
        model: str,
        base_url: str,
        api_key: str | None = None,
        *,
        name: str | None = None,
        timeout: float = 120.0,
        max_retries: int = 4,
        retry: RetryPolicy | None = None,
        params: dict[str, Any] | None = None,
        price_prompt: float = 0.0,
        price_completion: float = 0.0,
        price_cached_prompt: float | None = None,
        probe_timeout: float = 5.0,
        http_client: Any = None,
        message_shape: MessageShape = "openai",
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        self.name = name or model
        self.model = model
        self.base_url = base_url.rstrip("/")
        self.endpoint = public_url(self.base_url)
        """The base URL as messages show it: without user info or query (credentials)."""
        self.timeout = timeout
        self.retry = retry or RetryPolicy(max_retries=max_retries)
        self.params = dict(params or {})
        self.price_prompt = price_prompt
        self.price_completion = price_completion
        self.price_cached_prompt = price_cached_prompt
        self.probe_timeout = probe_timeout
        self.message_shape: MessageShape = message_shape
        if http_client is None:
            http_client = (
                lean_transport.lean_http_client(max_reply_bytes)
                if lean_transport.available()
                else openai.DefaultAsyncHttpxClient()
            )
        cap_replies(http_client, max_reply_bytes)
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key=api_key or NO_API_KEY,
            max_retries=0,
            timeout=timeout,
            http_client=http_client,
        )
        self._wire = WireShape()

    # -- Model protocol ----------------------------------------------------------------------

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        request: dict[str, Any] = {
            **self.params,
            **(params or {}),
            "model": self.model,
            "messages": sendable(
                to_toolbench_messages(messages)
                if self.message_shape == "toolbench"
                else to_openai_messages(messages)
            ),
        }
        if tools:
            request["tools"] = tools
        else:
            request.pop("tool_choice", None)
        started = time.perf_counter()
        attempts = 0

        async def attempt() -> dict[str, Any]:
            nonlocal attempts
            attempts += 1
            return await self._create(request)

        response = await call_with_retries(attempt, self.retry)
        turn = self._to_turn(response)
        turn.latency_ms = (time.perf_counter() - started) * 1000.0
        turn.retries = attempts - 1
        return turn

    async def _create(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request, as ``chat.completions.with_raw_response.create`` sends it but without
        its per-call type-hint walk (``agents.models.chat_request``); the raw body is checked
        before anything reads it (``checked_completion``: a body that is no valid completion is
        a retried ``malformed`` error)."""
        try:
            # The client's timeout bounds each wait for the next bytes; the whole request is
            # bounded too, or a reply trickled a byte at a time would hold the call for days.
            # (``within``: a timeout scope that never drops a cancellation, as ``wait_for``
            # before 3.12 can, so a run stopped by SIGTERM sends no further request.)
            raw = await lean_transport.within(self._send(request), self.timeout)
        except (TimeoutError, asyncio.TimeoutError) as e:  # one class from 3.11 on
            raise EndpointError(
                f"request to {self.endpoint} timed out: no whole reply within {self.timeout:g} s",
                kind="timeout",
            ) from e
        except openai.OpenAIError as e:
            too_large = reply_too_large(e)
            if too_large is not None:
                raise EndpointError(str(too_large), kind=REPLY_TOO_LARGE) from e
            raise translate_openai_error(e, endpoint=self.endpoint) from e
        return checked_completion(raw.http_response.content, endpoint=self.endpoint)

    async def _send(self, request: dict[str, Any]) -> Any:
        """The raw response to ``request``: posted as prepared when its shape allows it, else
        through ``create`` itself."""
        wire = await self._wire.prepare(request, timeout=self.timeout)
        if wire is None:
            create = self._client.chat.completions.with_raw_response.create
            return await create(**request, timeout=self.timeout)
        return await self._client.post(wire.path, body=wire.body, **wire.kwargs)

    def _to_turn(self, completion: dict[str, Any]) -> Turn:
        """The turn of a checked completion (plain dicts: no typed objects are built)."""
        message = completion["choices"][0]["message"]
        calls = []
        for i, tc in enumerate(message.get("tool_calls") or []):
            function = tc["function"]
            arguments = function.get("arguments")
            calls.append(
                ToolCall(
                    id=tc.get("id") or f"call_{i}",
                    name=function["name"],
                    arguments=arguments if arguments is not None else "{}",
                )
            )
        usage = Usage()
        counts = completion.get("usage")
        if counts is not None:
            prompt = counts.get("prompt_tokens") or 0
            done = counts.get("completion_tokens") or 0
            usage = Usage(
                prompt_tokens=prompt,
                completion_tokens=done,
                cost=self._cost(prompt, done, _cached_tokens(counts)),
            )
        cut = None
        if completion["choices"][0].get("finish_reason") == "length" and not calls:
            cut = f"{CUT_AT_TOKEN_LIMIT} before any function call: answer shorter, with one call"
        return Turn(
            content=message.get("content"),
            tool_calls=calls,
            usage=usage,
            format_error=cut,
            raw=completion,
        )

    def _cost(self, prompt: int, completion: int, cached: int) -> float:
        """USD for one call; cached prompt tokens at their own price when it is known."""
        if self.price_cached_prompt is None:
            cached = 0
        cached = min(cached, prompt)
        return (
            (prompt - cached) * self.price_prompt
            + cached * (self.price_cached_prompt or 0.0)
            + completion * self.price_completion
        )

    # -- lifecycle ---------------------------------------------------------------------------

    async def probe(self) -> list[str]:
        """One cheap ``GET {base_url}/models``; returns the served model ids.

        Raises ``ModelUnreachable`` when nothing answers, ``ModelError(kind="auth")`` when the
        key is refused. Other HTTP answers (some servers lack ``/models``; a proxy's HTML page)
        count as reachable, serving no model it could name.
        """
        try:
            page = await self._client.models.list(timeout=self.probe_timeout)
        except (openai.APITimeoutError, openai.APIConnectionError) as e:
            raise ModelUnreachable(
                f"the model endpoint {self.endpoint} does not answer ({type(e).__name__}: "
                f"{e.__cause__ or e}); start the server or point the model at another base URL"
            ) from e
        except openai.APIStatusError as e:
            err = translate_openai_error(e, endpoint=self.endpoint)
            if err.kind == "auth":
                raise ModelError(str(err), kind="auth") from e
            return []
        except openai.OpenAIError:
            return []
        except (AttributeError, TypeError, ValueError):  # a body that is no model list (HTML)
            return []
        data = getattr(page, "data", None)
        items = data if isinstance(data, list) else []
        return [m.id for m in items if isinstance(getattr(m, "id", None), str)]

    async def aclose(self) -> None:
        await self._client.close()

    async def __aenter__(self) -> OpenAICompatModel:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"OpenAICompatModel(model={self.model!r}, base_url={self.endpoint!r})"


def public_url(url: str) -> str:
    """``url`` without user info and query: what an error message may show of an endpoint."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _cached_tokens(usage: dict[str, Any]) -> int:
    """Prompt tokens the provider served from its cache (0 when it does not say)."""
    details = usage.get("prompt_tokens_details")
    cached = details.get("cached_tokens") if isinstance(details, dict) else None
    return cached if isinstance(cached, int) and not isinstance(cached, bool) else 0
