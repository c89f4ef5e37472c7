"""``FirstCallGate``: a shared client whose first call goes alone.

The episodes of a run share one client of a remote endpoint and start together. Were the
endpoint to refuse the run's set-up (a 401, a model it does not serve), every episode in flight
would make the same doomed call. The gate lets the run's first call through alone and holds the
others until it has an answer: when that answer is a configuration error
(``ModelError.configuration``) every held call fails with it without reaching the endpoint, so
a run against an endpoint that answers 401 makes exactly one model call and stops there;
otherwise the gate opens for good (an infrastructure failure of the first call included: that
is the episode's own). May import ``agents`` only.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agents.errors import ModelError
from agents.model import Message, Model, Turn

__all__ = ["FirstCallGate"]


class FirstCallGate:
    """A ``Model`` over ``inner`` whose first call goes alone (see the module doc)."""

    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.name = inner.name
        self._first: asyncio.Event | None = None
        self._refused: ModelError | None = None

    @property
    def params(self) -> dict[str, Any] | None:
        """The wrapped client's request parameters (what a trajectory records of the model)."""
        params = getattr(self.inner, "params", None)
        return params if isinstance(params, dict) else None

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        if self._first is None:
            self._first = asyncio.Event()
            try:
                return await self.inner.complete(messages, tools, params)
            except ModelError as e:
                if e.configuration:
                    self._refused = e
                raise
            finally:
                self._first.set()
        await self._first.wait()
        if self._refused is not None:
            raise ModelError(str(self._refused), kind=self._refused.kind)
        return await self.inner.complete(messages, tools, params)

    async def probe(self) -> Any:
        """The wrapped client's endpoint probe (None when it has none)."""
        probe = getattr(self.inner, "probe", None)
        return await probe() if probe is not None else None

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()
