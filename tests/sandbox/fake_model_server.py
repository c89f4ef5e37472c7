"""A fake model server executable for the launcher's tests (standard library only).

Installed by a test as ``vllm`` (or any name) first on PATH, it is started the way the launcher
starts a real server: it reads ``--host``/``--port`` and the served model name (``serve MODEL``,
``--served-model-name``, ``--model_alias``) from its arguments, serves ``GET /v1/models`` and
``POST /v1/chat/completions`` (a ``Finish`` call with an answer when ``Finish`` is offered, a
short text otherwise, with usage), and appends what happened to the JSON-lines file named by
``FAKE_SERVER_RECORD``: ``{"argv": [...], "pid": N}`` at start, ``{"signal": 15}`` on SIGTERM,
``{"request": {...}}`` per chat request. Behaviour switches (environment):

- ``FAKE_SERVER_IGNORE_TERM=1``: SIGTERM is recorded and ignored (only SIGKILL stops it);
- ``FAKE_SERVER_LISTEN_AFTER=S``: listens only S seconds after starting (a slow start);
- ``FAKE_SERVER_EXIT=N``: writes a few lines to stderr and exits with code N at once;
- ``FAKE_SERVER_NOT_READY=1``: ``/v1/models`` answers 503 forever;
- ``FAKE_SERVER_REPLY_DELAY=S``: every chat reply takes S seconds;
- ``FAKE_SERVER_DAEMON=PATH``: starts a child in a session of its own through a shell that
  exits at once (a daemon: its parent is gone), and writes the child's pid to PATH.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


def _record(entry: dict[str, Any]) -> None:
    path = os.environ.get("FAKE_SERVER_RECORD")
    if path:
        with open(path, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")


def _option(argv: list[str], *names: str) -> str | None:
    for i, arg in enumerate(argv):
        if arg in names and i + 1 < len(argv):
            return argv[i + 1]
    return None


def served_name(argv: list[str]) -> str:
    named = _option(argv, "--served-model-name", "--model_alias")
    if named:
        return named
    if argv and argv[0] == "serve" and len(argv) > 1:
        return argv[1]
    return _option(argv, "--model-path", "--model") or "fake-model"


def _completion(model: str, body: dict[str, Any]) -> dict[str, Any]:
    offered = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    message: dict[str, Any] = {"role": "assistant", "content": "A short answer."}
    finish = "stop"
    if "Finish" in offered:
        args = {"return_type": "give_answer", "final_answer": "the fake server's answer"}
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_0",
                    "type": "function",
                    "function": {"name": "Finish", "arguments": json.dumps(args)},
                }
            ],
        }
        finish = "tool_calls"
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
    }


def make_handler(model: str) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return None

        def _send(self, status: int, body: dict[str, Any]) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path.rstrip("/") != "/v1/models":
                self._send(404, {"error": "not found"})
            elif os.environ.get("FAKE_SERVER_NOT_READY"):
                self._send(503, {"error": "loading"})
            else:
                self._send(200, {"object": "list", "data": [{"id": model, "object": "model"}]})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = json.loads(self.rfile.read(length) or b"{}")
            _record({"request": {"model": body.get("model"), "tools": len(body.get("tools", []))}})
            time.sleep(float(os.environ.get("FAKE_SERVER_REPLY_DELAY") or 0))
            self._send(200, _completion(model, body))

    return Handler


def main(argv: list[str]) -> int:
    _record({"argv": argv, "pid": os.getpid()})
    if os.environ.get("FAKE_SERVER_EXIT"):
        print("loading the model...", file=sys.stderr)
        print("RuntimeError: not enough memory for the model", file=sys.stderr)
        return int(os.environ["FAKE_SERVER_EXIT"])

    def on_term(signum: int, frame: Any) -> None:
        _record({"signal": signum})
        if not os.environ.get("FAKE_SERVER_IGNORE_TERM"):
            os._exit(0)

    signal.signal(signal.SIGTERM, on_term)
    daemon = os.environ.get("FAKE_SERVER_DAEMON")
    if daemon:
        subprocess.run(["/bin/sh", "-c", f"setsid sleep 600 & echo $! > {daemon}"], check=True)
    time.sleep(float(os.environ.get("FAKE_SERVER_LISTEN_AFTER") or 0))
    host = _option(argv, "--host") or "127.0.0.1"
    port = int(_option(argv, "--port") or 8000)
    server = ThreadingHTTPServer((host, port), make_handler(served_name(argv)))
    print(f"fake server listening on {host}:{port}", file=sys.stderr, flush=True)
    server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
