"""``listen_socket``: the socket a server listens on, bound before the server starts.

Binding first turns the usual start-up failures (a port in use, a host name that does not
resolve, an address this machine does not have) into one ``MockToolsError`` line, instead of a
server that logs the failure and exits with its own status. ``sandbox serve``, ``python -m
mock_tools serve`` and ``sandbox view`` hand the bound socket to uvicorn.
"""

from __future__ import annotations

import socket

from mock_tools.errors import MockToolsError

__all__ = ["listen_socket"]


def listen_socket(host: str, port: int) -> socket.socket:
    """A TCP socket bound to ``host:port`` (``port`` 0: any free port); ``MockToolsError`` in
    one line naming the address and what is wrong."""
    if not 0 <= port <= 65535:
        raise MockToolsError(f"--port {port}: a port is a number from 0 to 65535")
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:
        reason = getattr(e, "strerror", None) or str(e)
        raise MockToolsError(f"--host {host}: {reason}") from e
    family, _, _, _, address = infos[0]
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
    except OSError as e:
        sock.close()
        raise MockToolsError(
            f"cannot listen on {host}:{port} ({e.strerror}); choose another --port or --host"
        ) from e
    return sock
