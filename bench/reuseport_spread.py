"""spread: how the kernel spreads keep-alive connections over ``serve --workers N`` (SO_REUSEPORT).

``serve --workers N`` is N processes, each listening on the port with ``SO_REUSEPORT``; the
kernel hashes each new connection onto one of them and it stays there. A load generator with a
fixed number of keep-alive connections (wrk: 16) so gives the workers unequal shares, and a
worker with few or none serves little however many cores it has: the suspect for issue 38's
per-worker rate falling as N grows. This measures the shares, which needs no spare cores: for
each N, ``trials`` times, ``connections`` connections are opened and each sends one request, and
each worker's established sockets on the port are counted (``/proc``: the sockets each process
holds against the kernel's table of connections). Figures: the busiest worker's share over the
fair share (``connections / N``) and the workers left without a connection, each a mean over the
trials. Linux only (it reads ``/proc``).
"""

from __future__ import annotations

import os
import socket
import statistics
import tempfile
import time
from pathlib import Path

from bench.cores import CoreLayout
from bench.http_bench import VIRTUAL_BODY, write_suite
from bench.http_servers import HOST, Server
from bench.report import BenchResult

__all__ = ["run", "spread"]


def _children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


def _socket_inodes(pid: int) -> set[int]:
    out = set()
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            out.add(int(target[8:-1]))
    return out


def _port_sockets(port: int, state: str) -> set[int]:
    """Inodes of the IPv4 sockets on local ``port`` in ``state`` (01 established, 0A listen)."""
    out = set()
    for line in Path("/proc/net/tcp").read_text().splitlines()[1:]:
        fields = line.split()
        if fields[3] == state and int(fields[1].rsplit(":", 1)[1], 16) == port:
            out.add(int(fields[9]))
    return out


def _request(port: int) -> bytes:
    head = (
        f"POST /virtual HTTP/1.1\r\nHost: {HOST}:{port}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(VIRTUAL_BODY)}\r\n\r\n"
    )
    return head.encode() + VIRTUAL_BODY


def spread(server: Server, workers: int, connections: int, trials: int) -> list[list[int]]:
    """Per trial, the connections each of the ``workers`` listening processes holds, busiest
    first (each trial opens ``connections`` new ones, one answered request each)."""
    port = server.port
    deadline = time.monotonic() + 120
    while len(_port_sockets(port, "0A")) < workers:  # every worker listening
        if time.monotonic() > deadline:
            raise RuntimeError(f"{workers} workers did not all listen on port {port}")
        time.sleep(0.2)
    listening = _port_sockets(port, "0A")
    pids = [p for p in [server.pid, *_children(server.pid)] if _socket_inodes(p) & listening]
    out = []
    for _ in range(trials):
        conns = [socket.create_connection((HOST, port), timeout=30) for _ in range(connections)]
        try:
            for c in conns:
                c.sendall(_request(port))
                if not c.recv(65536).startswith(b"HTTP/1.1 200"):
                    raise RuntimeError("the server did not answer 200")
            held = _port_sockets(port, "01")
            counts = sorted((len(_socket_inodes(p) & held) for p in pids), reverse=True)
        finally:
            for c in conns:
                c.close()
        if sum(counts) != connections:
            raise RuntimeError(f"{sum(counts)} of {connections} connections found on a worker")
        out.append(counts)
    return out


def run(quick: bool = False, cores: CoreLayout | None = None) -> BenchResult:
    result = BenchResult("spread")
    trials = 10 if quick else 50
    connections = 16  # what the http bench's wrk holds open
    with tempfile.TemporaryDirectory() as tmp:
        suite = write_suite(Path(tmp))
        for n in (2, 4, 8):
            with Server(f"workers-{n}", suite, cores) as server:
                shares = spread(server, n, connections, trials)
            busiest = statistics.mean(s[0] for s in shares) / (connections / n)
            idle = statistics.mean(sum(1 for x in s if x == 0) for s in shares)
            result.add(f"--workers {n}: busiest worker / fair share", busiest, "x", f"busiest_{n}")
            result.add(f"--workers {n}: workers without a connection", idle, "", f"idle_{n}")
    result.figures.update(connections=connections, trials=trials)
    result.rows.append(("connections, trials", f"{connections} keep-alive, {trials} per N"))
    return result
