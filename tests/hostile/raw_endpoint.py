"""``raw_endpoint``: an HTTP endpoint on 127.0.0.1 written byte by byte, for the replies no real
server library would send (a body without end, one trickled a byte at a time, one compressed
though the client asked for none)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

MODELS_LIST = b'{"object": "list", "data": []}'
"""The body of ``GET /models``, which a run's endpoint probe asks first."""


def head(length: int | None = None, extra: bytes = b"") -> bytes:
    """The status line and headers of a 200 JSON answer: ``Content-Length: length`` when
    given, else chunked; ``extra`` more header lines (each ending in CRLF)."""
    size = f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked"
    return (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
        + extra
        + size.encode()
        + (b"\r\n\r\n")
    )


def is_models(request: bytes) -> bool:
    """Whether ``request`` (its first bytes) asks ``/models``."""
    return b"/models" in request.split(b"\r\n", 1)[0]


@contextmanager
def raw_endpoint(answer: Callable[[socket.socket, bytes], None]) -> Iterator[str]:
    """Serve each connection in a thread of its own: ``answer(conn, request)`` writes the reply
    (a client that hangs up ends it quietly). Yields the base URL, ``http://127.0.0.1:PORT/v1``."""
    server = socket.create_server(("127.0.0.1", 0))

    def handle(conn: socket.socket) -> None:
        with conn:
            try:
                answer(conn, conn.recv(65536))
            except OSError:
                return

    def serve() -> None:
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    finally:
        server.close()
