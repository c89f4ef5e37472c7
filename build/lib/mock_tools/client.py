"""In-process access to a mock tool app: httpx over ASGI, no sockets, same code path as HTTP.

Imports httpx and FastAPI's type only.
"""

from __future__ import annotations

from collections.abc import Mapping

import httpx
from fastapi import FastAPI

__all__ = ["IN_PROCESS_BASE_URL", "in_process_client"]

IN_PROCESS_BASE_URL = "http://mock-tools"


def in_process_client(
    app: FastAPI,
    *,
    headers: Mapping[str, str] | None = None,
    timeout: float = 30.0,
    base_url: str = IN_PROCESS_BASE_URL,
) -> httpx.AsyncClient:
    """An ``httpx.AsyncClient`` that calls ``app`` in process (use it as an async context).

    ``headers`` are sent with every request, e.g. ``{"X-Sandbox-Session": episode_id}`` so that
    each episode counts identical calls from occurrence 1.
    """
    return httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),
        base_url=base_url,
        headers=dict(headers or {}),
        timeout=timeout,
    )
