"""Usage accounting and budget checks, on a clock the test moves: which field blocks the next
model or tool call, exactly at each limit, and what an episode's usage adds up to."""

from __future__ import annotations

import asyncio

import pytest

from agents.accounting import Accountant, DeadlineReached
from agents.budget import Budget
from agents.model import Usage
from agents.trajectory import EpisodeUsage


class Clock:
    def __init__(self, now: float = 100.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def accountant(clock: Clock | None = None, **budget: float | None) -> Accountant:
    return Accountant(Budget(**budget), EpisodeUsage(), clock or Clock())  # type: ignore[arg-type]


def test_the_wall_clock_blocks_model_and_tool_calls_once_the_seconds_are_spent() -> None:
    clock = Clock(100.0)
    acc = accountant(clock, max_seconds=5.0)
    assert acc.remaining_seconds() == 5.0 and acc.model_call_blocked() is None
    clock.now = 104.5
    assert acc.remaining_seconds() == pytest.approx(0.5)
    assert acc.model_call_blocked() is None and acc.tool_call_blocked() is None
    clock.now = 105.0  # exactly spent
    assert acc.remaining_seconds() == 0.0
    assert acc.model_call_blocked() == "max_seconds" and acc.tool_call_blocked() == "max_seconds"
    clock.now = 107.0  # never negative
    assert acc.remaining_seconds() == 0.0 and acc.elapsed() == 7.0


def test_without_a_wall_clock_budget_time_never_blocks() -> None:
    clock = Clock()
    acc = accountant(clock)
    clock.now += 1e9
    assert acc.remaining_seconds() is None
    assert acc.model_call_blocked() is None and acc.tool_call_blocked() is None


@pytest.mark.parametrize(
    ("budget", "field", "spend"),
    [
        ({"max_model_calls": 2}, "max_model_calls", Usage()),
        ({"max_tokens": 30}, "max_tokens", Usage(prompt_tokens=10, completion_tokens=5)),
        ({"max_tokens": 30}, "max_tokens", Usage(prompt_tokens=15)),
        ({"max_tokens": 30}, "max_tokens", Usage(completion_tokens=15)),
        ({"max_cost": 0.5}, "max_cost", Usage(cost=0.25)),
    ],
)
def test_each_spend_limit_blocks_exactly_when_it_is_reached(
    budget: dict[str, float], field: str, spend: Usage
) -> None:
    """Two calls reach each limit: the first leaves room for another, the second does not;
    tokens count prompt and completion together."""
    acc = accountant(**budget)
    acc.add_model_call(spend)
    assert acc.model_call_blocked() is None
    acc.add_model_call(spend)
    assert acc.model_call_blocked() == field
    assert acc.tool_call_blocked() is None  # spending on the model never blocks the tools


def test_the_tool_call_limit_blocks_exactly_at_its_value() -> None:
    acc = accountant(max_tool_calls=2)
    acc.add_tool_call()
    assert acc.tool_call_blocked() is None
    acc.add_tool_call()
    assert acc.tool_call_blocked() == "max_tool_calls"
    assert acc.model_call_blocked() is None
    assert accountant(max_tool_calls=0).tool_call_blocked() == "max_tool_calls"


def test_usage_adds_up_every_call_and_its_retries() -> None:
    acc = accountant(max_model_calls=None)
    acc.add_model_call(Usage(prompt_tokens=10, completion_tokens=5, cost=0.25), retries=2)
    acc.add_model_call(Usage(prompt_tokens=7, completion_tokens=3, cost=0.5))
    acc.add_model_call(Usage(prompt_tokens=1), retries=1)
    acc.add_tool_call()
    u = acc.usage
    assert (u.model_calls, u.model_retries, u.tool_calls) == (3, 3, 1)
    assert (u.prompt_tokens, u.completion_tokens, u.cost) == (18, 8, 0.75)


def test_close_records_the_wall_time_to_the_microsecond() -> None:
    clock = Clock(10.0)
    acc = accountant(clock)
    clock.now = 10.0 + 1.2345674
    acc.close()
    assert acc.usage.wall_seconds == 1.234567
    clock.now = 10.0 + 2.0000006
    acc.close()
    assert acc.usage.wall_seconds == 2.000001


async def test_a_call_that_outlasts_the_wall_clock_budget_is_cut_off_at_the_deadline() -> None:
    """A model or tool call that hangs is interrupted when ``max_seconds`` runs out (here the
    clock passes the deadline while the call hangs): the episode ends on its budget instead of
    waiting forever. The outer guard only turns a hang into a failure."""
    clock = Clock(100.0)
    acc = accountant(clock, max_seconds=0.05)

    async def hangs() -> None:
        clock.now = 200.0
        await asyncio.Event().wait()

    with pytest.raises(DeadlineReached):
        await asyncio.wait_for(acc.bounded(hangs()), timeout=10)


async def test_a_timeout_inside_a_call_is_not_taken_for_the_deadline() -> None:
    """A call's own timeout, raised while budget time is left, propagates as it is (the
    caller retries it as an infrastructure failure rather than ending the episode)."""
    acc = accountant(Clock(), max_seconds=60.0)

    async def times_out() -> None:
        raise asyncio.TimeoutError

    with pytest.raises(asyncio.TimeoutError):
        await acc.bounded(times_out())


async def test_a_call_within_the_budget_returns_its_result() -> None:
    async def answer() -> int:
        return 42

    assert await accountant(Clock(), max_seconds=60.0).bounded(answer()) == 42
    assert await accountant(Clock()).bounded(answer()) == 42
