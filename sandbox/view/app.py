"""The viewer's web app: ``create_app(root)`` serves the pages and their JSON with FastAPI.

Pages (stable URLs; each is the shell of ``pages.py``, drawn by ``static/app.js``)::

    /                                            the runs
    /runs/<run>                                  one run: scores, config, plots, episodes
    /runs/<run>/episodes/<task>/<trial>          one episode: its turns, its tree
    /compare?runs=A,B                            runs side by side
    /leaderboard[?reference=<run>]               one row per (suite, model, agent)

Data: the same paths under ``/api`` (``/api/runs``, ``/api/runs/<run>``,
``/api/runs/<run>/episodes``, ``/api/runs/<run>/episodes/<task>/<trial>``,
``/api/runs/<run>/plots/<name>``, ``/api/compare``, ``/api/leaderboard``), and ``/static/*``.
``<run>`` is the run folder's path under the root; an episode's address is read from the raw
path, so a task id holding ``/`` (sent as ``%2F``) has its page too. Unknown runs, episodes and
plots answer 404 with a message (JSON under ``/api``, a page otherwise); a comparison of fewer
than two runs 400; a run whose files cannot be read answers 422. Requests are served one at a
time (the viewer's caches are not shared across threads).
Imports FastAPI; may import the view modules.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, Response

from sandbox.errors import SandboxError
from sandbox.view.pages import STATIC_FILES, shell, static_bytes
from sandbox.view.viewer import BadRequest, NotFound, Viewer

__all__ = ["create_app"]

_EPISODE = re.compile(r"^/(?:api/)?runs/(?P<key>.+)/episodes/(?P<task>[^/]+)/(?P<trial>[^/]+)$")
"""An episode's address in the raw (still percent-encoded) path: a task id may hold a ``/``."""
_MEDIA = {"app.js": "text/javascript; charset=utf-8", "style.css": "text/css; charset=utf-8"}


def _status(error: SandboxError) -> int:
    """404 for what is not there, 400 for a request that cannot be answered as asked, 422 for
    a run whose files cannot be read (or a reference without scores)."""
    if isinstance(error, NotFound):
        return 404
    return 400 if isinstance(error, BadRequest) else 422


def _episode_address(request: Request) -> tuple[str, str, str] | None:
    """(run, task, trial) when the request names an episode, read from the raw path so that an
    encoded ``/`` in a task id stays part of it."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    found = _EPISODE.match(raw.decode("latin-1"))
    if found is None:
        return None
    return unquote(found["key"]), unquote(found["task"]), unquote(found["trial"])


def create_app(root: str | Path) -> FastAPI:
    """The viewer of the runs under ``root``."""
    viewer = Viewer(root)
    lock = threading.Lock()
    app = FastAPI(title="agent-sandbox viewer", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.viewer = viewer

    def answer(build: Callable[[], Any]) -> Response:
        try:
            with lock:
                data = build()
        except SandboxError as e:
            return JSONResponse({"detail": str(e)}, status_code=_status(e))
        if isinstance(data, list):
            return JSONResponse([d.model_dump(mode="json") for d in data])
        return JSONResponse(data.model_dump(mode="json"))

    def page(
        name: str, title: str, check: Callable[[], Any] | None = None, **params: Any
    ) -> Response:
        if check is not None:
            try:
                with lock:
                    check()
            except SandboxError as e:
                body = shell(
                    "error", title="Not found", params={"message": str(e)}, status_text=str(e)
                )
                return HTMLResponse(body, status_code=_status(e))
        return HTMLResponse(shell(name, title=title, params=params))

    # -- data --------------------------------------------------------------------------------

    @app.get("/api/runs")
    def api_runs() -> Response:
        return answer(viewer.runs)

    def api_episode(key: str, task: str, trial: str) -> Response:
        return answer(lambda: viewer.episode(key, task, trial))

    @app.get("/api/runs/{key:path}/episodes")
    def api_episodes(key: str) -> Response:
        return answer(lambda: viewer.episodes(key))

    @app.get("/api/runs/{key:path}/plots/{name}")
    def api_plot(key: str, name: str) -> Response:
        try:
            with lock:
                png = viewer.plot(key, name)
        except SandboxError as e:
            return JSONResponse({"detail": str(e)}, status_code=_status(e))
        return Response(png, media_type="image/png")

    @app.get("/api/runs/{key:path}")
    def api_run(key: str, request: Request) -> Response:
        address = _episode_address(request)
        if address is not None:
            return api_episode(*address)
        return answer(lambda: viewer.run(key))

    @app.get("/api/compare")
    def api_compare(runs: str = "") -> Response:
        return answer(lambda: viewer.compare(runs.split(",")))

    @app.get("/api/leaderboard")
    def api_leaderboard(reference: str | None = None) -> Response:
        return answer(lambda: viewer.leaderboard(reference or None))

    @app.get("/api/{rest:path}")
    def api_unknown(rest: str) -> Response:
        return JSONResponse({"detail": f"no such API route: /api/{rest}"}, status_code=404)

    # -- pages -------------------------------------------------------------------------------

    @app.get("/")
    def index() -> Response:
        return page("index", "Runs")

    def episode(key: str, task: str, trial: str) -> Response:
        return page(
            "episode",
            f"{task} #{trial} - {key}",
            lambda: viewer.episode(key, task, trial),
            key=key,
            task=task,
            trial=trial,
        )

    @app.get("/runs/{key:path}")
    def run(key: str, request: Request) -> Response:
        address = _episode_address(request)
        if address is not None:
            return episode(*address)
        return page("run", f"Run {key}", lambda: viewer.state(key), key=key)

    @app.get("/compare")
    def compare(runs: str = "") -> Response:
        return page("compare", "Compare runs", runs=runs)

    @app.get("/leaderboard")
    def leaderboard(reference: str = "") -> Response:
        return page("leaderboard", "Leaderboard", reference=reference)

    @app.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in STATIC_FILES:
            return JSONResponse({"detail": f"no static file {name!r}"}, status_code=404)
        return Response(static_bytes(name), media_type=_MEDIA[name])

    @app.exception_handler(404)
    async def not_found(request: Request, exc: Exception) -> Response:
        message = f"nothing at {request.url.path}"
        if request.url.path.startswith("/api/"):
            return JSONResponse({"detail": message}, status_code=404)
        return HTMLResponse(
            shell("error", title="Not found", params={"message": message}, status_text=message),
            status_code=404,
        )

    return app
