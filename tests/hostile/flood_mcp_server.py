"""An MCP server over stdio whose one tool floods its answer, for the tool-reply cap tests.

``python flood_mcp_server.py MEGABYTES``: ``measure(item)`` answers one JSON-RPC line holding a
text of MEGABYTES MiB; ``python flood_mcp_server.py endless``: it starts the answer line and never
ends it (it writes until its stdout is closed). Written on raw JSON-RPC lines (no SDK), so the
server itself costs no memory for what it sends; every other request is answered as an MCP
server answers it.
"""

from __future__ import annotations

import json
import sys
from typing import Any

CHUNK = b"x" * 65536
TOOL = {
    "name": "measure",
    "description": "Measurements of an item.",
    "inputSchema": {"type": "object", "properties": {"item": {"type": "string"}}},
}


def _send(message: dict[str, Any]) -> None:
    sys.stdout.buffer.write(json.dumps(message).encode() + b"\n")
    sys.stdout.buffer.flush()


def _flood(request_id: Any, size: int | None) -> None:
    out = sys.stdout.buffer
    head = {
        "jsonrpc": "2.0",
        "id": request_id,
        "result": {"content": [{"type": "text", "text": ""}]},
    }
    prefix, suffix = json.dumps(head).encode().split(b'"text": ""')
    out.write(prefix + b'"text": "')
    written = 0
    while size is None or written < size:
        out.write(CHUNK)
        written += len(CHUNK)
    out.write(b'"' + suffix + b"\n")
    out.flush()


def main(argv: list[str]) -> int:
    size = None if argv[:1] == ["endless"] else int(float(argv[0]) * 2**20)
    for line in sys.stdin.buffer:
        try:
            request = json.loads(line)
        except ValueError:
            continue
        method, request_id = request.get("method"), request.get("id")
        if request_id is None:  # a notification
            continue
        if method == "initialize":
            result: dict[str, Any] = {
                "protocolVersion": request["params"]["protocolVersion"],
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "flood-tools", "version": "1"},
            }
        elif method == "tools/list":
            result = {"tools": [TOOL]}
        elif method == "tools/call":
            try:
                _flood(request_id, size)
            except BrokenPipeError:
                return 0
            continue
        else:
            result = {}
        _send({"jsonrpc": "2.0", "id": request_id, "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
