"""The retry schedule of a model call: which failures are retried, how long each wait is, and
what the final error says, whether the call fails at its first attempt or after retries."""

from __future__ import annotations

import pytest

from agents.models.openai_errors import EndpointError
from agents.models.retry import RetryPolicy, call_with_retries

NO_JITTER = RetryPolicy(max_retries=3, initial=1.0, max_backoff=30.0, jitter=0.0)


class Script:
    """Answers each attempt with the next outcome: an error is raised, anything else returned."""

    def __init__(self, *outcomes: object) -> None:
        self.outcomes = list(outcomes)
        self.attempts = 0
        self.slept: list[float] = []

    async def attempt(self) -> object:
        self.attempts += 1
        outcome = self.outcomes.pop(0)
        if isinstance(outcome, BaseException):
            raise outcome
        return outcome

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


async def test_a_call_that_succeeds_at_once_never_waits() -> None:
    script = Script("ok")
    assert await call_with_retries(script.attempt, NO_JITTER, sleep=script.sleep) == "ok"
    assert (script.attempts, script.slept) == (1, [])


async def test_retry_after_sets_each_wait_capped_and_backoff_fills_the_others() -> None:
    """A 429's Retry-After is the wait after that attempt (capped at max_retry_after); an
    attempt without one waits the exponential backoff of its own attempt number."""
    policy = NO_JITTER.model_copy(update={"max_retry_after": 10.0})
    script = Script(
        EndpointError("slow down", kind="rate_limit", retry_after=7.0),
        EndpointError("down", kind="server"),
        EndpointError("slow down", kind="rate_limit", retry_after=99.0),
        "ok",
    )
    assert await call_with_retries(script.attempt, policy, sleep=script.sleep) == "ok"
    assert script.slept == [7.0, 2.0, 10.0]  # 2.0: backoff after the 2nd attempt (1 * 2**1)
    assert script.attempts == 4


async def test_a_first_failure_that_is_not_retryable_is_raised_as_it_is() -> None:
    script = Script(EndpointError("no such model", kind="model_not_found"))
    with pytest.raises(EndpointError) as info:
        await call_with_retries(script.attempt, NO_JITTER, sleep=script.sleep)
    assert (info.value.attempts, str(info.value)) == (1, "no such model")
    assert script.slept == []


async def test_a_retry_that_fails_for_good_stops_and_says_how_many_attempts() -> None:
    script = Script(EndpointError("down", kind="server"), EndpointError("bad key", kind="auth"))
    with pytest.raises(EndpointError) as info:
        await call_with_retries(script.attempt, NO_JITTER, sleep=script.sleep)
    assert info.value.attempts == 2
    assert str(info.value) == "bad key (after 2 attempts)"
    assert script.slept == [1.0]


async def test_no_retries_means_one_attempt_even_for_a_retryable_failure() -> None:
    script = Script(EndpointError("down", kind="server"))
    policy = NO_JITTER.model_copy(update={"max_retries": 0})
    with pytest.raises(EndpointError) as info:
        await call_with_retries(script.attempt, policy, sleep=script.sleep)
    assert (info.value.attempts, str(info.value), script.slept) == (1, "down", [])


async def test_timeouts_are_not_retried_when_the_policy_says_so() -> None:
    """llama.cpp's one slot keeps generating for an abandoned request: no retry of a timeout."""
    script = Script(EndpointError("timed out", kind="timeout"), "ok")
    policy = NO_JITTER.model_copy(update={"retry_timeouts": False})
    with pytest.raises(EndpointError):
        await call_with_retries(script.attempt, policy, sleep=script.sleep)
    assert script.attempts == 1


async def test_the_last_retry_is_the_policys_max_retries() -> None:
    script = Script(*[EndpointError("down", kind="server")] * 3, "never reached")
    policy = NO_JITTER.model_copy(update={"max_retries": 2})
    with pytest.raises(EndpointError) as info:
        await call_with_retries(script.attempt, policy, sleep=script.sleep)
    assert (info.value.attempts, script.attempts) == (3, 3)
    assert str(info.value) == "down (after 3 attempts)"
    assert script.slept == [1.0, 2.0]


async def test_an_error_that_is_no_endpoint_error_is_never_retried() -> None:
    script = Script(ValueError("a bug"), "ok")
    with pytest.raises(ValueError, match="a bug"):
        await call_with_retries(script.attempt, NO_JITTER, sleep=script.sleep)
    assert script.attempts == 1
