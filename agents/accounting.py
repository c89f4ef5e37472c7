"""Usage accounting and budget checks for one episode.

The loops ask before every model call and every tool call whether the budget allows it; the
answer is the name of the exhausted ``Budget`` field or ``None``. Exhaustion is data (the episode
ends with ``budget_exhausted`` and ``end_reason = "budget:<field>"``), never an exception. A
model or tool call is awaited through ``Accountant.bounded``, which cuts it off when the wall
clock runs out (``DeadlineReached``, which the caller turns into that end). Imports
``agents.budget``, ``agents.model`` and ``agents.trajectory`` only.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

from agents.budget import Budget
from agents.model import Usage
from agents.trajectory import EpisodeUsage

T = TypeVar("T")

Clock = Callable[[], float]
"""Seconds from an arbitrary origin (``time.monotonic`` by default; tests inject a fake)."""


class Accountant:
    """Counts what an episode spends into ``usage`` and says when a budget field is spent."""

    def __init__(self, budget: Budget, usage: EpisodeUsage, clock: Clock = time.monotonic) -> None:
        self.budget = budget
        self.usage = usage
        self._clock = clock
        self._start = clock()

    def elapsed(self) -> float:
        return self._clock() - self._start

    def remaining_seconds(self) -> float | None:
        if self.budget.max_seconds is None:
            return None
        return max(0.0, self.budget.max_seconds - self.elapsed())

    def _seconds_spent(self) -> bool:
        remaining = self.remaining_seconds()
        return remaining is not None and remaining <= 0.0

    def model_call_blocked(self) -> str | None:
        """The budget field that forbids another model call, if any."""
        b, u = self.budget, self.usage
        if b.max_model_calls is not None and u.model_calls >= b.max_model_calls:
            return "max_model_calls"
        if b.max_tokens is not None and u.prompt_tokens + u.completion_tokens >= b.max_tokens:
            return "max_tokens"
        if b.max_cost is not None and u.cost >= b.max_cost:
            return "max_cost"
        if self._seconds_spent():
            return "max_seconds"
        return None

    def tool_call_blocked(self) -> str | None:
        """The budget field that forbids another tool call, if any."""
        b, u = self.budget, self.usage
        if b.max_tool_calls is not None and u.tool_calls >= b.max_tool_calls:
            return "max_tool_calls"
        if self._seconds_spent():
            return "max_seconds"
        return None

    def add_model_call(self, usage: Usage, retries: int = 0) -> None:
        self.usage.model_calls += 1
        self.usage.model_retries += retries
        self.usage.prompt_tokens += usage.prompt_tokens
        self.usage.completion_tokens += usage.completion_tokens
        self.usage.cost += usage.cost

    def add_tool_call(self) -> None:
        self.usage.tool_calls += 1

    def close(self) -> None:
        """Write the wall time spent so far into ``usage``."""
        self.usage.wall_seconds = round(self.elapsed(), 6)

    async def bounded(self, awaitable: Awaitable[T]) -> T:
        """``awaitable``, cut off when the episode's ``max_seconds`` runs out
        (``DeadlineReached``); another timeout inside it propagates as it is."""
        remaining = self.remaining_seconds()
        if remaining is None:
            return await awaitable
        try:
            return await asyncio.wait_for(awaitable, timeout=remaining)
        except asyncio.TimeoutError as e:
            if self.remaining_seconds() == 0.0:
                raise DeadlineReached from e
            raise


class DeadlineReached(Exception):
    """The episode's ``max_seconds`` ran out during a model or tool call."""
