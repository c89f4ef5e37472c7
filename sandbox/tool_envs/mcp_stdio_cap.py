"""Caps the lines an MCP server writes on stdout, between it and the MCP client.

Run as a script (never imported by the project, so it starts without the project's imports)::

    python mcp_stdio_cap.py LIMIT -- COMMAND [ARG...]

It starts ``COMMAND`` with its own stdin and stdout piped (stderr inherited), copies what it is
given on stdin to the server, and copies the server's stdout back line by line, each line being
one JSON-RPC message. A line longer than ``LIMIT`` bytes is not passed on: as soon as it passes
the limit, the answer to the request it answers is written instead, a JSON-RPC error with the
code ``TOO_LARGE_CODE`` and a message saying so, and the rest of the line is read and dropped,
however long it is (an answer that never ends costs ``LIMIT`` bytes of memory and the time to
reach them). The request is found by the ``id`` near the start of the line (JSON-RPC servers
write it before the result), else, when only one request is waiting, it is that one.

The MCP client's own stdio transport reads a line whole (and, in the SDK, in time quadratic in
its length: 67 s for 50 MB), so the cap has to be applied before it; a relay process keeps the
SDK's transport (spawn, shutdown, killing the process tree) as it is. It exits with the server's
exit code, and when its stdin closes it closes the server's. Standard library only.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import subprocess
import sys
import threading

TOO_LARGE_CODE = -32099
"""The JSON-RPC error code of an answer over the cap (the implementation-defined server range)."""
CHUNK = 1 << 16
_HEAD = 4096
_ID = re.compile(rb'"id"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)')


class _Waiting:
    """The ids of the requests the client sent and the server has not answered yet."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.ids: dict[str, object] = {}

    def sent(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return
        if isinstance(message, dict) and "method" in message and "id" in message:
            with self.lock:
                self.ids[json.dumps(message["id"])] = message["id"]

    def answered(self, head: bytes) -> object | None:
        """The id of the request a line starting with ``head`` answers (forgotten as waiting);
        None when it cannot be told."""
        found = _ID.search(head)
        with self.lock:
            if found is not None:
                key = json.dumps(json.loads(found[1]))
                return self.ids.pop(key, json.loads(found[1]))
            if len(self.ids) == 1:
                return self.ids.popitem()[1]
        return None


def _copy_in(server: subprocess.Popen[bytes], waiting: _Waiting) -> None:
    """Our stdin to the server's, line by line (the ids of requests noted); closes it at EOF."""
    assert server.stdin is not None
    with contextlib.suppress(OSError):  # a server gone: its stdin is closed below all the same
        for line in sys.stdin.buffer:
            waiting.sent(line)
            server.stdin.write(line)
            server.stdin.flush()
    with contextlib.suppress(OSError):
        server.stdin.close()


def _too_large(request_id: object, limit: int) -> bytes:
    error = {
        "code": TOO_LARGE_CODE,
        "message": f"the MCP server's answer is larger than {limit} bytes "
        "(tools.max_reply_bytes): it was not read",
    }
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "error": error}).encode() + b"\n"


def relay(stdout: int, out: int, limit: int, waiting: _Waiting) -> None:
    """The server's ``stdout`` to ``out``, each line at most ``limit`` bytes (see the module)."""
    line = bytearray()
    over = False
    while True:
        chunk = os.read(stdout, CHUNK)
        if not chunk:
            return
        while chunk:
            end = chunk.find(b"\n")
            part, chunk = (chunk, b"") if end < 0 else (chunk[: end + 1], chunk[end + 1 :])
            if not over:
                line += part
                if len(line) > limit + 1 or (len(line) > limit and end < 0):
                    over = True
                    request_id = waiting.answered(bytes(line[:_HEAD]))
                    if request_id is not None:
                        os.write(out, _too_large(request_id, limit))
                    del line[:]
            if end >= 0:
                if not over:
                    waiting.answered(bytes(line[:_HEAD]))
                    _write_all(out, bytes(line))
                line, over = bytearray(), False


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def main(argv: list[str]) -> int:
    if len(argv) < 4 or argv[2] != "--":
        print("usage: mcp_stdio_cap.py LIMIT -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    limit, command = int(argv[1]), argv[3:]
    try:
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    except OSError as e:
        print(f"cannot start {command[0]}: {e}", file=sys.stderr)
        return 127
    waiting = _Waiting()
    threading.Thread(target=_copy_in, args=(server, waiting), daemon=True).start()
    assert server.stdout is not None
    try:
        relay(server.stdout.fileno(), sys.stdout.fileno(), limit, waiting)
    except (BrokenPipeError, OSError):
        server.kill()
    code = server.wait()
    return code if code >= 0 else 128 - code  # a signal, as a shell reports it


if __name__ == "__main__":
    status = main(sys.argv)
    sys.stderr.flush()
    # not sys.exit: the thread copying stdin may hold its lock, which the interpreter's own
    # shutdown would then wait for ("could not acquire lock ... at interpreter shutdown")
    os._exit(status)
