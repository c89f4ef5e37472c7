"""Serving one suite from N processes on one port: ``serve_http(app, options, build)``.

With ``workers`` 1 the app is served by uvicorn in this process, as it always was. With N > 1
this process binds ``host:port`` with ``SO_REUSEPORT`` (which also resolves port 0), starts
N - 1 worker processes (``multiprocessing``'s spawn: nothing of this process's state, its SQLite
connections included, is carried across a fork) that build their own service from the same
options and bind the same port, and serves as the N-th itself. The kernel spreads the incoming
connections over the N listening sockets, so each process serves its connections on its own core.

What the processes share is on disk: the suite's documents cache and its mmap recording index
(every process maps the same file, so the pages are in memory once), and the overlay, whose
claims make one miss-policy call per distinct miss across the processes
(``OverlayStore.claim``). What each keeps to itself: occurrence counters (``/reset`` and
``/stats`` speak for the process that answers them), the stats and, with ``--mcp``, MCP sessions,
which is why ``--mcp`` and ``--record-to`` (a file without claims) take one worker.

Stopping: Ctrl-C in a terminal reaches every process; a SIGTERM to this process stops its server,
then its workers (SIGTERM, then SIGKILL after ``STOP_SECONDS``); a worker whose parent is gone
stops itself (it watches its parent id once a second).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn

__all__ = ["STOP_SECONDS", "reuseport_socket", "serve_http"]

STOP_SECONDS = 10.0
"""How long a worker is given to stop after SIGTERM before it is killed."""


def reuseport_socket(host: str, port: int) -> socket.socket:
    """A listening TCP socket on ``host:port`` that other processes may bind as well."""
    if not hasattr(socket, "SO_REUSEPORT"):
        raise OSError("this platform has no SO_REUSEPORT: serve with one worker")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind((host, port))
    sock.listen(2048)
    return sock


def _settings(options: Any) -> dict[str, Any]:
    return {
        "host": options.host,
        "port": options.port,
        "log_level": options.log_level,
        "access_log": options.access_log,
    }


def _uvicorn_config(app: Any, options: Any) -> uvicorn.Config:
    return uvicorn.Config(app, **_settings(options))


def _watch_parent(parent: int) -> None:
    """Stop this worker (SIGTERM to itself) once its parent process is gone."""
    while os.getppid() == parent:
        time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)


def _worker(options: Any, build: Callable[[Any], Any], parent: int, ready: Any) -> None:
    """One worker process: its own service and app, its own socket on the shared port; a byte
    is sent on ``ready`` (a pipe) once the socket listens (connections the kernel gives it
    meanwhile wait in its backlog)."""
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    app = build(options)
    sock = reuseport_socket(options.host, options.port)
    ready.send_bytes(b"1")
    ready.close()
    uvicorn.Server(_uvicorn_config(app, options)).run(sockets=[sock])


def _start(workers: list[tuple[Any, Any]]) -> None:
    """Start the workers and wait until each listens; ``OSError`` when one ends before."""
    for process, _ in workers:
        process.start()
    for process, ready in workers:
        while not ready.poll(0.1):
            if not process.is_alive():
                raise OSError(f"a worker process ended before it served (exit {process.exitcode})")


def _stop(workers: list[Any]) -> None:
    for process in workers:
        if process.pid is not None and process.is_alive():
            process.terminate()
    deadline = time.monotonic() + STOP_SECONDS
    for process in workers:
        if process.pid is None:
            continue
        process.join(max(0.0, deadline - time.monotonic()))
        if process.is_alive():
            process.kill()
            process.join()


class _Primary(uvicorn.Server):
    """The server of the process that started the workers: it stops them before it re-raises
    the signal that stopped it (uvicorn ends a signalled process with that signal)."""

    def __init__(self, config: uvicorn.Config, workers: list[Any]) -> None:
        super().__init__(config)
        self.workers = workers

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        with super().capture_signals():
            try:
                yield
            finally:
                _stop(self.workers)


def serve_http(
    app: Any, options: Any, build: Callable[[Any], Any], bound: socket.socket | None = None
) -> None:
    """Serve ``app`` on ``options.host:options.port`` until stopped, from ``options.workers``
    processes; ``build(options)`` makes a worker's app (a module-level function: it is pickled
    to the spawned workers, with ``options``). One process serves on ``bound`` when given (the
    socket ``listen_socket`` bound, so a port in use was one line before uvicorn started)."""
    if options.workers <= 1:
        if bound is None:
            uvicorn.run(app, **_settings(options))
        else:
            uvicorn.Server(_uvicorn_config(app, options)).run(sockets=[bound])
        return
    sock = reuseport_socket(options.host, options.port)
    resolved = options.model_copy(update={"port": sock.getsockname()[1]})
    spawn = multiprocessing.get_context("spawn")
    workers = []
    for _ in range(options.workers - 1):
        ready, told = spawn.Pipe(duplex=False)
        args = (resolved, build, os.getpid(), told)
        workers.append((spawn.Process(target=_worker, args=args, daemon=True), ready))
    try:
        _start(workers)
        config = _uvicorn_config(app, resolved)  # configures uvicorn's logging
        logging.getLogger("uvicorn.error").info(
            "Serving on http://%s:%d from %d processes",
            options.host,
            resolved.port,
            len(workers) + 1,
        )
        _Primary(config, [process for process, _ in workers]).run(sockets=[sock])
    finally:
        _stop([process for process, _ in workers])
        sock.close()
