"""The run's own hold on an episode's ``--max-seconds``: a strategy that never returns is stopped.

The built-in strategies keep to the budget's wall clock themselves (every model and tool call is
cut where the clock runs out, ``agents.accounting``), and so do external agents. A strategy of
someone else's (a plugin) that awaits something else (a sleep, a queue, a server of its own)
meets no such cut; without this, ``--max-seconds`` would not end its episode. So the run gives
an episode's ``agent.run`` its ``max_seconds`` plus a grace (``OVERRUN_GRACE``, or the
strategy's own ``overrun_grace``: an external agent's is the time it takes to stop its process)
and then cancels it (``Overran``). The strategy runs as a task of its own, so a ``SystemExit``
or ``KeyboardInterrupt`` raised in its code is handed back to the episode (which records it),
not to the event loop (which would end the run). Limits: a strategy that blocks the event loop
(a synchronous sleep) cannot be cancelled from within the process; one that swallows its
cancellation is left behind (logged), its episode recorded all the same. May import ``agents``
only.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any

from agents.budget import Budget

__all__ = ["OVERRUN_GRACE", "Overran", "overrun_grace", "within_wall_clock"]

log = logging.getLogger(__name__)

OVERRUN_GRACE = 2.0
"""Seconds past ``max_seconds`` a strategy has to return before it is cancelled (a cooperative
one returns within milliseconds of its clock running out), and then to unwind."""


class Overran(Exception):
    """The strategy did not return within its episode's ``max_seconds`` and its grace; the
    message says so (the episode's record starts with the strategy's name)."""


def overrun_grace(agent: object) -> float:
    """The grace of ``agent``: its own ``overrun_grace`` when it declares one."""
    grace = getattr(agent, "overrun_grace", None)
    return float(grace) if isinstance(grace, (int, float)) and grace >= 0 else OVERRUN_GRACE


class _Escaped(Exception):
    """``SystemExit`` or ``KeyboardInterrupt`` raised inside a strategy run as a task of its own
    (a task would hand them to the event loop, ending the run)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


async def _contained(run: Coroutine[Any, Any, Any]) -> Any:
    try:
        return await run
    except (SystemExit, KeyboardInterrupt) as e:
        raise _Escaped(e) from e


async def _stop(task: asyncio.Future[Any], grace: float) -> None:
    """Cancel ``task`` and give it ``grace`` seconds to unwind, not more."""
    task.cancel()
    await asyncio.wait({task}, timeout=grace)
    if not task.done():
        log.warning("a strategy ignored its cancellation; it is left running")
    elif not task.cancelled():
        task.exception()  # retrieved: what it raised while being cancelled is not the episode's


async def within_wall_clock(run: Coroutine[Any, Any, Any], budget: Budget, grace: float) -> Any:
    """What ``run`` returns (whatever it is: the caller checks it), or ``Overran`` when it did
    not return within ``budget.max_seconds`` plus ``grace`` (it is then cancelled). Without
    ``max_seconds`` nothing bounds it."""
    if budget.max_seconds is None:
        return await run
    name = f"strategy {getattr(run, '__qualname__', type(run).__name__)}"  # named at shutdown
    task = asyncio.get_running_loop().create_task(_contained(run), name=name)
    try:
        done, _ = await asyncio.wait({task}, timeout=budget.max_seconds + grace)
    except asyncio.CancelledError:  # the run is stopping: the episode stops with it
        await _stop(task, grace)
        raise
    if not done:
        await _stop(task, grace)
        raise Overran(
            f"did not return within --max-seconds {budget.max_seconds:g} and {grace:g} s of "
            "grace: the run stopped it; its steps were not returned"
        )
    try:
        return task.result()
    except _Escaped as e:
        raise e.original from None
