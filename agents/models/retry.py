"""Retry policy for model endpoints: exponential backoff with jitter, honouring Retry-After."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from pydantic import BaseModel, Field

from agents.models.openai_errors import EndpointError

if TYPE_CHECKING:  # tenacity is imported by the first call that may be retried
    from tenacity import RetryCallState

T = TypeVar("T")


class RetryPolicy(BaseModel):
    """How often and how patiently to retry transient endpoint failures."""

    max_retries: int = Field(default=4, ge=0, description="Retries after the first attempt.")
    initial: float = Field(default=1.0, ge=0, description="First backoff, seconds.")
    max_backoff: float = Field(default=30.0, ge=0, description="Cap of one backoff, seconds.")
    exp_base: float = Field(default=2.0, ge=1)
    jitter: float = Field(default=1.0, ge=0, description="Up to this many random extra seconds.")
    max_retry_after: float = Field(
        default=60.0, ge=0, description="Cap on a server's Retry-After, seconds."
    )
    retry_timeouts: bool = Field(
        default=True,
        description="Retry a request that timed out. False for a server with one slot that "
        "keeps generating for an abandoned request (llama.cpp): a retry would only queue "
        "behind that generation.",
    )


class _Wait:
    """Retry-After when the server sent one (capped), exponential backoff with jitter otherwise."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        self._rng = random.Random()

    def __call__(self, state: RetryCallState) -> float:
        """The wait after tenacity's attempt ``state.attempt_number``: the retries' tenacity
        run starts at the call's second attempt, so its attempt n is the call's n + 1."""
        exc = state.outcome.exception() if state.outcome else None
        return self.after(exc, state.attempt_number + 1)

    def after(self, exc: BaseException | None, attempt: int) -> float:
        """The wait after the call's ``attempt``-th attempt failed with ``exc``."""
        if isinstance(exc, EndpointError) and exc.retry_after is not None:
            return min(exc.retry_after, self._policy.max_retry_after)
        p = self._policy
        try:
            exp = p.initial * p.exp_base ** (attempt - 1)
        except OverflowError:
            exp = p.max_backoff
        return min(exp, p.max_backoff) + self._rng.uniform(0, p.jitter)


def _retryable(exc: BaseException, policy: RetryPolicy) -> bool:
    if not isinstance(exc, EndpointError) or not exc.retryable:
        return False
    return policy.retry_timeouts or exc.kind != "timeout"


async def call_with_retries(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], Awaitable[None]] | None = None,
) -> T:
    """Run ``attempt`` until it succeeds, a non-retryable ``EndpointError`` occurs, or the
    retries are spent; the final error carries the number of attempts made.

    The first attempt is awaited directly: most calls succeed at once, and tenacity's machinery
    (its state, its callbacks) cost a tenth of a local model call's CPU. Only a call whose first
    attempt failed in a retryable way waits and goes on through tenacity, which makes the
    retries with the same waits, stop and classification as if it had made every attempt."""
    try:
        return await attempt()
    except EndpointError as e:
        e.attempts = 1
        if policy.max_retries == 0 or not _retryable(e, policy):
            raise
        first = e
    wait = _Wait(policy)
    await (sleep or asyncio.sleep)(wait.after(first, 1))
    return await _retried(attempt, policy, wait, sleep)


async def _retried(
    attempt: Callable[[], Awaitable[T]],
    policy: RetryPolicy,
    wait: _Wait,
    sleep: Callable[[float], Awaitable[None]] | None,
) -> T:
    """The call's attempts after the first (which failed, retryably), through tenacity."""
    from tenacity import AsyncRetrying, retry_if_exception, stop_after_attempt

    kwargs: dict[str, Any] = {} if sleep is None else {"sleep": sleep}
    retrying = AsyncRetrying(
        stop=stop_after_attempt(policy.max_retries),
        wait=wait,
        retry=retry_if_exception(lambda e: _retryable(e, policy)),
        reraise=True,
        **kwargs,
    )
    attempts = 1

    async def counted() -> T:
        nonlocal attempts
        attempts += 1
        return await attempt()

    try:
        return await retrying(counted)
    except EndpointError as e:
        e.attempts = attempts
        e.args = (f"{e.args[0]} (after {attempts} attempts)",)
        raise
