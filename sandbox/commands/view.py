"""``sandbox view``: browse runs in a local web app, or export their pages as static files.

sandbox view                         # the runs under runs/, at http://127.0.0.1:8780/
sandbox view runs/<id>               # the same, opening on that run
sandbox view runs --port 9000 --host 0.0.0.0
sandbox view --export site/ runs/<a> runs/<b>    # HTML + JSON that opens from the file system
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any
from urllib.parse import quote

from mock_tools.errors import MockToolsError
from mock_tools.listen import listen_socket
from sandbox.commands import COMMANDS
from sandbox.commands.out_folder import out_folder
from sandbox.errors import ConfigError
from sandbox.store import MANIFEST
from sandbox.store.defaults import DEFAULT_OUT

__all__ = ["DEFAULT_PORT", "register"]

DEFAULT_PORT = 8780


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "view",
        help=COMMANDS["view"].help,
        description="Serve a web viewer of the runs under a folder (default: runs/): runs, "
        "scores, episodes, search trees, comparisons and the leaderboard. Works offline. "
        "With --export, write a static copy instead.",
    )
    parser.add_argument(
        "paths",
        nargs="*",
        metavar="PATH",
        help="the folder of runs to serve, or one run folder to open on (default: runs/); "
        "with --export: the run folders to export (default: every run under runs/)",
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help="port to listen on (0: any free port)"
    )
    parser.add_argument(
        "--export",
        metavar="DIR",
        default=None,
        help="write a self-contained static copy (HTML + JSON) into DIR instead of serving",
    )
    parser.set_defaults(handler=handle)


def _is_run(path: Path) -> bool:
    return (path / MANIFEST).is_file()


def handle(args: argparse.Namespace) -> int:
    paths = [Path(p) for p in args.paths]
    if args.export is not None:
        return _export(paths, out_folder(Path(args.export), "--export"))
    if len(paths) > 1:
        raise ConfigError(
            "sandbox view serves one folder; to put several runs side by side open "
            "/compare in the viewer, or export them with --export DIR RUN..."
        )
    path = paths[0] if paths else Path(DEFAULT_OUT)
    if not path.is_dir():
        raise ConfigError(f"no folder {path}: make a run first (make run), or give the runs folder")
    start = "/"
    root = path
    if _is_run(path):
        root = path.resolve().parent
        start = f"/runs/{quote(path.resolve().name)}"
    if not 0 <= args.port <= 65535:
        raise ConfigError(f"--port {args.port}: not a port number (0-65535)")
    _serve(root, args.host, args.port, start)
    return 0


def _export(paths: list[Path], out: Path) -> int:
    from sandbox.view.export import export_static
    from sandbox.view.viewer import Viewer

    paths = paths or [Path(DEFAULT_OUT)]
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        raise ConfigError(f"no folder {missing[0]}")
    if len(paths) == 1 and not _is_run(paths[0]):
        viewer, keys = Viewer(paths[0]), []
    else:
        not_runs = [p for p in paths if not _is_run(p)]
        if not_runs:
            raise ConfigError(f"{not_runs[0]} is not a run folder (no {MANIFEST})")
        resolved = [p.resolve() for p in paths]
        root = Path(os.path.commonpath([p.parent for p in resolved]))
        viewer = Viewer(root)
        keys = [p.relative_to(root).as_posix() for p in resolved]
    summary = export_static(viewer, keys, out)
    print(
        f"exported {summary.runs} run(s), {summary.episodes} episode pages, {summary.files} files "
        f"into {summary.out}; open {Path(summary.out) / 'index.html'}"
    )
    return 0


def _serve(root: Path, host: str, port: int, start: str) -> None:
    # uvicorn and FastAPI load only when serving (start-up of the other commands)
    import uvicorn

    from sandbox.view.app import create_app

    try:
        sock = listen_socket(host, port)
    except MockToolsError as e:
        raise ConfigError(str(e)) from e
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    print(f"viewing {root} at http://{shown}:{bound}{start}  (Ctrl-C to stop)", flush=True)
    if host not in ("127.0.0.1", "localhost", "::1"):
        print(
            f"note: listening on {host}: anyone who can reach it sees these runs", file=sys.stderr
        )
    server = uvicorn.Server(uvicorn.Config(create_app(root), log_level="warning"))
    server.run(sockets=[sock])
