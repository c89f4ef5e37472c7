"""The servers the HTTP benchmarks load, each run in its own process on the same stack.

``python -m bench.http_servers KIND PORT [PATH]`` serves, with uvicorn on uvloop + httptools,
127.0.0.1, one worker, the access log off:

- ``project PATH``: the project's app for the suite at PATH (``mock_tools.create_app``);
- ``workers-N PATH``: ``serve`` of the suite at PATH from N processes (``--workers N``: the
  server's own code, ``mock_tools.serving.serve``, on the same stack);
- ``fastapi``: a bare FastAPI route ``POST /const`` returning constant bytes;
- ``asgi``: a raw ASGI app that reads and parses the JSON body and returns the same bytes (the
  floor of Python HTTP for a JSON call); ``asgi+US``: the same app spending US more µs of CPU
  per request;
- ``stb-peer PATH``: ``bench.stb_peer`` over the StableToolBench cache folder PATH;
- ``fake-model``: ``bench.fake_model``, an OpenAI-compatible model answering the k=3 workload.

``Server(kind, path, cores)`` starts one as a subprocess, pinned to the layout's server cores
(``bench.cores``), and stops it (a context manager).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import TracebackType
from typing import Any

import orjson

from bench.cores import CoreLayout
from bench.procs import ROOT

HOST = "127.0.0.1"
CONSTANT = b'{"ok":true,"body":{"temp_c":3,"sky":"snow"},"error":"","provenance":"hit"}'
"""What the constant servers answer: the bytes of the project's recorded hit in the bench suite."""


def bare_fastapi() -> Any:
    from fastapi import FastAPI, Response

    app = FastAPI()

    @app.post("/const")
    async def const() -> Response:
        return Response(CONSTANT, media_type="application/json")

    return app


async def raw_asgi(
    scope: dict[str, Any],
    receive: Callable[[], Awaitable[dict[str, Any]]],
    send: Callable[[dict[str, Any]], Awaitable[None]],
) -> None:
    """Reads the request body and parses it as JSON (orjson), then answers the constant: the
    least an ASGI app that answers a JSON call can do."""
    if scope["type"] != "http":
        return
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    orjson.loads(body or b"{}")
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(CONSTANT)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": CONSTANT})


def busy_asgi(microseconds: float) -> Any:
    """The raw ASGI app spending ``microseconds`` more CPU per request (a busy loop): what the
    anchor serves when its app costs as much more as the project's does in process."""
    seconds = microseconds / 1e6

    async def app(
        scope: dict[str, Any],
        receive: Callable[[], Awaitable[dict[str, Any]]],
        send: Callable[[dict[str, Any]], Awaitable[None]],
    ) -> None:
        end = time.perf_counter() + seconds
        while time.perf_counter() < end:
            pass
        await raw_asgi(scope, receive, send)

    return app


def stack() -> dict[str, str]:
    """uvicorn's event loop and HTTP parser settings: uvloop and httptools when installed."""
    out = {"loop": "asyncio", "http": "h11"}
    try:
        import uvloop  # noqa: F401

        out["loop"] = "uvloop"
    except ImportError:
        pass
    try:
        import httptools  # noqa: F401

        out["http"] = "httptools"
    except ImportError:
        pass
    return out


def main(argv: list[str]) -> None:
    import uvicorn

    kind, port = argv[0], int(argv[1])
    app: Any
    if kind.startswith("workers-"):
        from mock_tools.serving import ServeOptions, build_service, serve

        options = ServeOptions(suite=argv[2], port=port, workers=int(kind[8:]), log_level="warning")
        serve(build_service(options), options)
        return
    if kind == "project":
        from mock_tools import create_app, load_suite

        app = create_app(load_suite(argv[2]))
    elif kind == "fastapi":
        app = bare_fastapi()
    elif kind == "asgi":
        app = raw_asgi
    elif kind.startswith("asgi+"):
        app = busy_asgi(float(kind[5:]))
    elif kind == "fake-model":
        from bench.fake_model import app as fake_model_app

        app = fake_model_app
    elif kind == "stb-peer":
        from bench.stb_peer import create_peer_app

        app = create_peer_app(Path(argv[2]))
    else:
        raise SystemExit(f"unknown server kind {kind!r}")
    uvicorn.run(app, host=HOST, port=port, log_level="warning", access_log=False, **stack())


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


class Server:
    """One benchmark server in its own process; ``port`` once entered."""

    def __init__(
        self, kind: str, path: Path | None = None, cores: CoreLayout | None = None
    ) -> None:
        self.kind, self.path = kind, path
        self.cores = cores or CoreLayout()
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    @property
    def pid(self) -> int:
        """The server's process (its workers are its children)."""
        if self._proc is None:
            raise RuntimeError(f"the {self.kind} server is not running")
        return self._proc.pid

    def __enter__(self) -> Server:
        args = [sys.executable, "-m", "bench.http_servers", self.kind, str(self.port)]
        if self.path is not None:
            args.append(str(self.path))
        pin = self.cores.pin("servers")  # its workers inherit it
        self._proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.DEVNULL, preexec_fn=pin)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                with socket.create_connection((HOST, self.port), timeout=1):
                    return self
            except OSError:
                if self._proc.poll() is not None:
                    break
                time.sleep(0.05)
        self._proc.kill()
        raise RuntimeError(f"the {self.kind} server did not start")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()


if __name__ == "__main__":
    main(sys.argv[1:])
