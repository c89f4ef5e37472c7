"""The one place where ``openai`` client exceptions become ``ModelError``s.

Mapping (``kind``, retried?):

========================================  ===============  ========
openai exception                          kind             retried
========================================  ===============  ========
``APITimeoutError``                       ``timeout``      yes
``APIConnectionError``                    ``connection``   yes
``RateLimitError`` (429)                  ``rate_limit``   yes
status 408                                ``timeout``      yes
status >= 500                             ``server``       yes
``APIResponseValidationError``            ``server``       yes
status 401 / 403                          ``auth``         no
status 400 / 404 / 422 / other 4xx        ``bad_request``  no
any other ``OpenAIError``                 ``other``        no
========================================  ===============  ========
"""

from __future__ import annotations

import email.utils
import time
from typing import TYPE_CHECKING

from agents.errors import ModelError

if TYPE_CHECKING:  # openai is imported only when a remote model's call fails
    import openai

RETRYABLE_KINDS = frozenset({"timeout", "connection", "rate_limit", "server"})


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


def _status_kind(status: int) -> str:
    if status == 429:
        return "rate_limit"
    if status == 408:
        return "timeout"
    if status >= 500:
        return "server"
    if status in (401, 403):
        return "auth"
    return "bad_request"


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
            kind="server",
            status=exc.status_code,
        )
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        kind = _status_kind(status)
        hint = ""
        if kind == "auth":
            hint = " (check the API key for this endpoint)"
        elif status == 404:
            hint = " (check the model name and the base URL, which usually ends in /v1)"
        return EndpointError(
            f"{endpoint} answered HTTP {status}: {exc.message}{hint}",
            kind=kind,
            status=status,
            retry_after=parse_retry_after(exc.response.headers),
        )
    return EndpointError(f"model client error for {endpoint}: {exc}", kind="other")
