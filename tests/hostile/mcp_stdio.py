"""Raw JSON-RPC lines to ``python -m mock_tools serve SUITE --mcp-stdio``, for the hostile tests:
a client that writes what it likes (bad lines, batches) and reads each line the server writes."""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.hostile.conftest import ROOT

PROTOCOL = "2025-06-18"


class StdioServer:
    """The mock tool server over stdio in a subprocess; ``send`` a line, ``receive`` one."""

    def __init__(self, suite: Path, *extra: str) -> None:
        paths = [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "mock_tools", "serve", str(suite), "--mcp-stdio", *extra],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
        )
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")  # end of output

    def send(self, message: Any) -> None:
        line = message if isinstance(message, str) else json.dumps(message)
        assert self.proc.stdin is not None
        self.proc.stdin.write(line.encode() + b"\n")
        self.proc.stdin.flush()

    def receive(self, timeout: float = 20.0) -> dict[str, Any]:
        line = self._lines.get(timeout=timeout)
        assert line, "the server closed its output: " + self.stderr()
        value: dict[str, Any] = json.loads(line)
        return value

    def initialize(self) -> None:
        params = {
            "protocolVersion": PROTOCOL,
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"},
        }
        self.send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params})
        assert "result" in self.receive()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def close_input(self) -> list[dict[str, Any]]:
        """Close stdin; every line the server writes until it exits."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        out = []
        while line := self._lines.get(timeout=60):
            out.append(json.loads(line))
        self.proc.wait(timeout=30)
        return out

    def stderr(self) -> str:
        if self.proc.poll() is None:
            return ""
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode(errors="replace")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=30)


def call(request_id: int, name: str, arguments: Any, **meta: Any) -> dict[str, Any]:
    params: dict[str, Any] = {"name": name, "arguments": arguments}
    if meta:
        params["_meta"] = meta
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
