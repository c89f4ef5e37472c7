"""Single flight: identical work in flight runs once, and a failure is shared for a moment.

``SingleFlight.run(key, work, failed)`` runs ``work()`` for the first caller of ``key``; callers
of the same key that come while it runs wait for its result (or its exception) instead of
running it again. A result ``failed`` says is a failure is also *held* for ``hold`` seconds after
it came: callers of that key in that window get it at once. After the window, the next caller runs
the work again (so a failure is never kept as the answer), and a success is never held here (the
service keeps successes where it keeps answers). Held failures are bounded (``limit``, oldest
dropped first), so endless distinct failing keys cannot grow memory.

The service uses it for misses answered by a miss policy: a simulator or upstream API that is down
is asked once by any number of identical calls made at once, not once per call
(``mock_tools.service``). Imports nothing of the project.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

__all__ = ["DEFAULT_FAILURE_HOLD", "SingleFlight"]

T = TypeVar("T")

DEFAULT_FAILURE_HOLD = 2.0
"""Seconds a failed answer (simulator or upstream down) answers identical calls after it came."""

_HELD_LIMIT = 10_000


class SingleFlight(Generic[T]):
    """Shares the result of identical work in flight, and holds failures for ``hold`` seconds."""

    def __init__(
        self,
        hold: float = DEFAULT_FAILURE_HOLD,
        *,
        limit: int = _HELD_LIMIT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hold = hold
        self.limit = limit
        self._clock = clock
        self._pending: dict[Hashable, asyncio.Future[T]] = {}
        self._held: dict[Hashable, tuple[float, T]] = {}  # key -> (until, failure), oldest first

    def held(self, key: Hashable) -> T | None:
        """The failure held for ``key``, if its window is still open."""
        found = self._held.get(key)
        if found is None:
            return None
        if found[0] > self._clock():
            return found[1]
        del self._held[key]
        return None

    async def run(
        self, key: Hashable, work: Callable[[], Awaitable[T]], failed: Callable[[T], bool]
    ) -> T:
        held = self.held(key)
        if held is not None:
            return held
        pending = self._pending.get(key)
        if pending is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._pending[key] = future
        try:
            result = await work()
        except BaseException as e:
            future.set_exception(e)
            future.exception()  # retrieved here: the waiters re-raise it
            raise
        else:
            if failed(result) and self.hold > 0:
                self._keep(key, result)
            future.set_result(result)
            return result
        finally:
            del self._pending[key]

    def _keep(self, key: Hashable, failure: T) -> None:
        self._held.pop(key, None)
        while len(self._held) >= self.limit:
            del self._held[next(iter(self._held))]
        self._held[key] = (self._clock() + self.hold, failure)
