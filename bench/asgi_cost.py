"""The apps alone: µs per request of each ASGI app called in process, without a socket.

``python -m bench.asgi_cost SUITE`` (what ``bench http`` runs in a fresh interpreter) calls the
raw ASGI anchor and the project's app (``POST /virtual``, ``POST /tools/{tool}/{api}``, the
recorded hit of the http bench's suite) with a ready scope and body, in interleaved rounds, and
prints the median µs per request of each and, for the project's call, of its recording lookup
(``RecordingStore.locate``) alone. Over HTTP every target also pays the server's own work
(uvicorn's protocol, httptools, the socket), the same for all; what the apps differ by is here.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

App = Callable[..., Awaitable[None]]


def _scope(path: str, length: int) -> dict[str, Any]:
    headers = [
        (b"host", b"127.0.0.1:8765"),
        (b"content-type", b"application/json"),
        (b"content-length", str(length).encode()),
    ]
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": path,
        "raw_path": path.encode(),
        "root_path": "",
        "query_string": b"",
        "headers": headers,
        "server": ("127.0.0.1", 8765),
        "client": ("127.0.0.1", 50000),
        "state": {},
    }


async def _per_request(app: App, path: str, body: bytes, n: int) -> float:
    """µs per request of ``n`` calls of ``app`` (a fresh scope each, as a server makes)."""
    message = {"type": "http.request", "body": body, "more_body": False}
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return message

    async def send(m: dict[str, Any]) -> None:
        if m["type"] == "http.response.start":
            statuses.append(m["status"])

    started = time.perf_counter()
    for _ in range(n):
        await app(_scope(path, len(body)), receive, send)
    elapsed = time.perf_counter() - started
    if any(s != 200 for s in statuses):
        raise RuntimeError(f"{path}: not every answer was 200")
    return elapsed / n * 1e6


def _lookup_us(service: Any, n: int) -> float:
    call = service.prepare("weather", "current", {"city": "Oslo"})
    locate = service.store.locate
    started = time.perf_counter()
    for _ in range(n):
        locate(call.tool, call.api, call.key, 1)
    return (time.perf_counter() - started) / n * 1e6


def measure(suite: Path, rounds: int = 7, n: int = 20_000) -> dict[str, float]:
    from bench.http_bench import NATIVE_BODY, VIRTUAL_BODY
    from bench.http_servers import raw_asgi
    from mock_tools import create_service, load_suite
    from mock_tools.http_app import http_app

    service = create_service(load_suite(suite))
    app = http_app(service)
    targets = {
        "asgi": (raw_asgi, "/", NATIVE_BODY),
        "virtual": (app, "/virtual", VIRTUAL_BODY),
        "native": (app, "/tools/weather/current", NATIVE_BODY),
    }
    times: dict[str, list[float]] = {name: [] for name in [*targets, "lookup"]}

    async def rounds_of_all() -> None:
        for target, path, body in targets.values():
            await _per_request(target, path, body, 500)  # warm-up
        for _ in range(rounds):
            for name, (target, path, body) in targets.items():
                times[name].append(await _per_request(target, path, body, n))
            times["lookup"].append(_lookup_us(service, n))

    asyncio.run(rounds_of_all())
    return {name: statistics.median(values) for name, values in times.items()}


if __name__ == "__main__":
    print(json.dumps(measure(Path(sys.argv[1]))))
