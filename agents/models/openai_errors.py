"""The one place where ``openai`` client exceptions become ``ModelError``s.

Mapping (``kind``, retried?), by what the error means (``classify_status``):

===============================================  ===================  ========
openai exception                                 kind                 retried
===============================================  ===================  ========
``APITimeoutError``                              ``timeout``          yes
``APIConnectionError``                           ``connection``       yes
``RateLimitError`` (429)                         ``rate_limit``       yes
status 408                                       ``timeout``          yes
status >= 500 caused by the request (below)      ``bad_request``      no
other status >= 500                              ``server``           yes
``APIResponseValidationError``                   ``malformed``        yes
status 401 / 403                                 ``auth``             no
status 404; a 4xx naming an unknown model        ``model_not_found``  no
a 4xx saying the request exceeds the context     ``context_length``   no
other 4xx                                        ``bad_request``      no
any other ``OpenAIError``                        ``other``            no
===============================================  ===================  ========

``auth`` and ``model_not_found`` are configuration errors (``ModelError.configuration``): a run
stops at the first one. ``context_length`` is no failure of the endpoint: the episode's history
outgrew the model's context (the loop ends the episode as ``context_overflow``). The messages
recognised as a context overflow are those of OpenAI (code ``context_length_exceeded``), vLLM
("This model's maximum context length is N tokens...", "The decoder prompt (length N) is longer
than the maximum model length of M"), SGLang ("The input (N tokens) is longer than the model's
context length", "Requested token count exceeds the model's maximum context length"), llama.cpp
("request (N tokens) exceeds the available context size", type ``exceed_context_size_error``)
and Ollama ("prompt too long; exceeded max context length by N tokens"). A body that is not a
valid completion (``agents.models.completion_body``) is ``malformed``: retried like a 5xx.

Some servers answer a request they cannot read with a 5xx: llama-cpp-python's answers 500 to a
message its schema refuses ("N validation errors: ... 'loc': ('body', 'messages', ...)"), to a
chat template that cannot render the messages (Jinja's "'dict object' has no attribute
'content'"), and to a ``tool_choice`` naming no offered tool ("Tool with name 'x' not found in
tools"); any server may say ``invalid_request_error``. The same request would fail the same way
on every retry, so such a 5xx is the request's error, ``bad_request``, not retried.
"""

from __future__ import annotations

import email.utils
import re
import time
from typing import TYPE_CHECKING

from agents.errors import ModelError

if TYPE_CHECKING:  # openai is imported only when a remote model's call fails
    import openai

RETRYABLE_KINDS = frozenset({"timeout", "connection", "rate_limit", "server", "malformed"})

_CONTEXT_OVERFLOW = re.compile(
    r"context[ _]length|context (?:size|window)|maximum model length|prompt too long|"
    r"exceed_context_size",
    re.IGNORECASE,
)
"""What servers say when a request is longer than the model's context (see the module doc)."""
_REQUEST_FAULT = re.compile(
    r"\bvalidation errors?\b|'loc': \('body'|invalid_request_error|"
    r"'\w+ object' has no attribute|not found in tools",
    re.IGNORECASE,
)
"""What a 5xx caused by the request itself says (see the module doc)."""
_UNKNOWN_MODEL = re.compile(
    r"model_not_found|\b(?:unknown|invalid|no such) model|"
    r"\bmodel\b[^.\n]{0,120}?\b(?:does not exist|not found|is not (?:served|available|supported))",
    re.IGNORECASE,
)
"""What servers say about a model name they do not serve (OpenAI's code ``model_not_found``,
vLLM's "The model `x` does not exist", Ollama's "model 'x' not found", a proxy's "Invalid model
name")."""


class EndpointError(ModelError):
    """A ``ModelError`` translated from the client library, with what the retry loop needs."""

    def __init__(
        self,
        message: str,
        *,
        kind: str,
        status: int | None = None,
        retry_after: float | None = None,
        attempts: int = 1,
    ) -> None:
        super().__init__(message, kind=kind, attempts=attempts)
        self.status = status
        self.retry_after = retry_after

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS


def parse_retry_after(headers: object, *, now: float | None = None) -> float | None:
    """Seconds to wait from ``retry-after-ms`` / ``Retry-After`` (seconds or an HTTP date)."""
    get = getattr(headers, "get", None)
    if get is None:
        return None
    millis = get("retry-after-ms")
    if millis is not None:
        try:
            return max(0.0, float(millis) / 1000.0)
        except ValueError:
            pass
    value = get("retry-after")
    if value is None:
        return None
    value = str(value).strip()
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def classify_status(status: int, text: str = "") -> str:
    """The kind of an HTTP error answer, from its status and its text (message, code, body)."""
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "bad_request" if _REQUEST_FAULT.search(text) else "server"
    if status in (401, 403):
        return "auth"
    if status == 404 or _UNKNOWN_MODEL.search(text):
        return "model_not_found"
    if _CONTEXT_OVERFLOW.search(text):
        return "context_length"
    return "bad_request"


def _error_text(exc: openai.APIStatusError) -> str:
    """Everything an error answer says: its message, its code and its body."""
    return " ".join(str(x) for x in (exc.message, getattr(exc, "code", None), exc.body) if x)


def translate_openai_error(exc: openai.OpenAIError, *, endpoint: str) -> EndpointError:
    """Turn any exception raised by the ``openai`` client into an ``EndpointError``."""
    import openai

    if isinstance(exc, openai.APITimeoutError):
        return EndpointError(f"request to {endpoint} timed out", kind="timeout")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return EndpointError(f"cannot connect to {endpoint}: {cause}", kind="connection")
    if isinstance(exc, openai.APIResponseValidationError):
        return EndpointError(
            f"{endpoint} returned a response that is not a valid chat completion: {exc}",
            kind="malformed",
            status=exc.status_code,
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        kind = classify_status(status, _error_text(exc))
        hint = ""
        if kind == "auth":
            hint = " (check the API key for this endpoint)"
        elif kind == "model_not_found":
            hint = " (check the model name and the base URL, which usually ends in /v1)"
        return EndpointError(
            f"{endpoint} answered HTTP {status}: {exc.message}{hint}",
            kind=kind,
            status=status,
            retry_after=parse_retry_after(exc.response.headers),
        )
    return EndpointError(f"model client error for {endpoint}: {exc}", kind="other")
