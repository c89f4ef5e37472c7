"""The mock server's API pages, ``/docs`` (Swagger UI) and ``/redoc``, served without internet.

FastAPI's own pages load Swagger UI and ReDoc from a CDN, so they stay blank offline. Here both
pages load the same files from the server itself, under ``/docs/assets/``: the copies the
``fastapi-offline`` package ships (a dependency; its wrapper is MIT-licensed, Swagger UI
Apache-2.0, ReDoc MIT) are mounted as static files, and the pages are FastAPI's, pointed at
them. Nothing on either page comes from another host (the favicon included; ReDoc's Google fonts
are off). Imports FastAPI and Starlette only.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

__all__ = ["ASSETS_PATH", "add_docs_pages", "assets_folder"]

ASSETS_PATH = "/docs/assets"


def assets_folder() -> Path:
    """Swagger UI's and ReDoc's files, as the ``fastapi-offline`` package installs them."""
    return Path(str(files("fastapi_offline"))) / "static"


def add_docs_pages(app: FastAPI) -> None:
    """``/docs`` and ``/redoc`` on ``app`` (made with ``docs_url=None, redoc_url=None``), their
    scripts and styles served from ``ASSETS_PATH``."""
    app.mount(ASSETS_PATH, StaticFiles(directory=assets_folder()), name="docs-assets")

    def urls(request: Request) -> tuple[str, str]:
        root = request.scope.get("root_path", "")
        return f"{root}{app.openapi_url}", f"{root}{ASSETS_PATH}"

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        openapi, assets = urls(request)
        return get_swagger_ui_html(
            openapi_url=openapi,
            title=f"{app.title} - Swagger UI",
            swagger_js_url=f"{assets}/swagger-ui-bundle.js",
            swagger_css_url=f"{assets}/swagger-ui.css",
            swagger_favicon_url=f"{assets}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        openapi, assets = urls(request)
        return get_redoc_html(
            openapi_url=openapi,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{assets}/redoc.standalone.js",
            redoc_favicon_url=f"{assets}/favicon.png",
            with_google_fonts=False,
        )
