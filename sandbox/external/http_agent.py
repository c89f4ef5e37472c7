"""An external agent served over HTTP: the task POSTed to its URL, once per episode.

``call_url`` POSTs the task (with the environment a process would get, under ``env``) and
reads the response as a process's run: its body stands for stdout (the answer line), an error
status for a non-zero exit (the body's end for stderr), a connection that fails for an agent
that cannot be reached. The request is cut at the deadline, and ``grace`` seconds after the
episode ended, as a process would be stopped (``sandbox.external.process.supervise``). May
import httpx and ``sandbox.external.process``.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import Any

from sandbox.external.process import STDOUT_KEPT, AgentExit, Limits, Tail, supervise

__all__ = ["call_url"]


class _Request:
    """A pending request seen as a process by ``supervise``: ``wait()`` is its end."""

    def __init__(self, request: asyncio.Future[Any]) -> None:
        self.request = request

    async def wait(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.shield(self.request)


async def call_url(url: str, payload: dict[str, Any], limits: Limits) -> AgentExit:
    """POST the task to an agent served over HTTP (see the module docstring)."""
    import httpx  # only for agents served over HTTP

    started = time.monotonic()
    result = AgentExit()
    async with httpx.AsyncClient(timeout=None) as client:
        request = asyncio.ensure_future(_post(client, url, payload))
        try:
            await supervise(_Request(request), result, limits)
        finally:
            request.cancel()
            with contextlib.suppress(BaseException):
                await request
    result.seconds = time.monotonic() - started
    if request.cancelled():
        return result
    error = request.exception()
    if error is not None:
        result.unreachable = f"{type(error).__name__}: {error}"
        return result
    status, body = request.result()
    result.exit_code = 0 if 200 <= status < 300 else status
    if result.exit_code == 0:
        result.stdout, result.stdout_cut = body.text(), body.cut
    else:
        chars = limits.stderr_chars
        result.stderr = body.text()[-chars:] if chars else ""
    return result


async def _post(client: Any, url: str, payload: dict[str, Any]) -> tuple[int, Tail]:
    """POST the task; the status and the end of the body (at most ``STDOUT_KEPT`` bytes kept
    however long the body is: an endless one is cut at the deadline)."""
    body = Tail(STDOUT_KEPT)
    async with client.stream("POST", url, json=payload) as response:
        async for chunk in response.aiter_bytes():
            body.add(chunk)
    return response.status_code, body
