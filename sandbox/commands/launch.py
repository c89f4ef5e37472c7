"""``sandbox launch``: start a model alias's server by hand, in the foreground, where runs find it.

sandbox launch smollm2-135m              # llama.cpp on 127.0.0.1:8080 (the alias's base_url)
sandbox launch qwen-7b                   # vllm serve ... on 127.0.0.1:8000
sandbox launch smollm2-135m --print      # only print the command

The server listens on the port of the alias's ``base_url`` (``SANDBOX_<ALIAS>_BASE_URL`` moves
it), so every run of that alias finds it there and starts no server of its own: the way several
runs share one server. The command replaces this process; Ctrl-C stops the server. When a
server of the alias already answers there, it says so and exits 0 (a second one would only fail
to bind); when the port is held by anything else, it says so in one line, exit 2, before it
prints that it serves.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
from typing import Any
from urllib.parse import urlsplit

from mock_tools.errors import MockToolsError
from mock_tools.listen import listen_socket
from sandbox.commands import COMMANDS
from sandbox.errors import ConfigError
from sandbox.models import resolve_model
from sandbox.models.launch import hand_command, missing_launcher, server_command
from sandbox.models.managed import DEFAULT_HAND_PORT

__all__ = ["register"]

HOST = "127.0.0.1"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "launch",
        help=COMMANDS["launch"].help,
        description="Start the server of a model alias that has launch: in models.yaml, in the "
        "foreground, on the port of the alias's base_url, so that runs of the alias use it and "
        "start none of their own. Ctrl-C stops it.",
    )
    parser.add_argument("model", metavar="MODEL", help="an alias of models.yaml with launch:")
    parser.add_argument(
        "--port", type=int, default=None, help="port to listen on (default: the base_url's)"
    )
    parser.add_argument(
        "--print", action="store_true", dest="only_print", help="print the command, start nothing"
    )
    parser.set_defaults(handler=handle)


def handle(args: argparse.Namespace) -> int:
    spec = resolve_model(args.model, env=os.environ)
    if spec.launch is None or not spec.model:
        raise ConfigError(
            f"model {args.model!r} has no launch: in models.yaml; start its server yourself"
        )
    port = args.port or urlsplit(spec.base_url or "").port or DEFAULT_HAND_PORT
    if not 0 < port < 65536:
        raise ConfigError(f"--port must be a TCP port (1-65535), got {port}")
    if args.only_print:
        print(hand_command(spec.launch, spec.model, HOST, port))
        return 0
    url = f"http://{HOST}:{port}/v1"
    served = served_models(url)
    if served is not None and spec.model in served:
        print(f"{args.model} is served at {url} already; runs of {args.model} use it")
        return 0
    if served is not None:
        what = f"serves {', '.join(served[:3])}" if served else "serves no model list"
        raise ConfigError(
            f"port {port} is held by another server (its {url}/models {what}, not "
            f"{spec.model}); stop it, or give --port"
        )
    try:
        listen_socket(HOST, port).close()  # a port held by a process that does not answer HTTP
    except MockToolsError as e:
        raise ConfigError(str(e)) from e
    missing = missing_launcher(spec.launch)
    if missing is not None:
        raise ConfigError(f"cannot start {args.model!r}: {missing}")
    argv = server_command(spec.launch, spec.model, HOST, port)
    if spec.base_url and urlsplit(spec.base_url).port != port:
        hint = f"; runs find it with {spec.base_url_env}={url}" if spec.base_url_env else ""
    else:
        hint = f"; runs of {args.model} use it"
    print(f"serving {args.model} at {url} (Ctrl-C stops it){hint}", file=sys.stderr, flush=True)
    print(shlex.join(argv), file=sys.stderr, flush=True)
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        raise ConfigError(f"cannot start {argv[0]}: {e.strerror}") from e
    return 0  # pragma: no cover - execvp does not return


def served_models(url: str, timeout: float = 3.0) -> list[str] | None:
    """The model ids ``GET {url}/models`` lists (``[]`` when something answers that lists
    none: another kind of server), None when nothing answers there."""
    import httpx  # only when a server is to be started

    try:
        reply = httpx.get(f"{url}/models", timeout=timeout)
    except httpx.HTTPError:
        return None
    try:
        data = reply.json().get("data")
    except (ValueError, AttributeError):  # not JSON, not an object: an HTML page
        return []
    if not isinstance(data, list):
        return []
    return [str(m["id"]) for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
