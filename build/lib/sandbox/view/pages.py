"""The HTML shell every page shares; ``static/app.js`` draws the page into it.

Served live, a page fetches its data from ``/api/...``; exported, the page carries its data in a
``<script type="application/json">`` element, so it opens from the file system with no server.
``safe_name`` is the file name an exported page gets for a run key segment, task id or trial
(``app.js`` computes the same). Standard library only.
"""

from __future__ import annotations

import html
import json
import re
from importlib import resources
from typing import Any, Literal

__all__ = ["PAGES", "STATIC_FILES", "safe_name", "shell", "static_bytes"]

PAGES = ("index", "run", "episode", "compare", "leaderboard", "error")
STATIC_FILES = ("app.js", "style.css")
_SAFE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._@+-]*")

Mode = Literal["live", "static"]


def static_bytes(name: str) -> bytes:
    """A file shipped in ``sandbox/view/static``."""
    if name not in STATIC_FILES:
        raise KeyError(name)
    return resources.files("sandbox.view").joinpath("static").joinpath(name).read_bytes()


def safe_name(text: str) -> str:
    """``text`` when it is a plain file name, else ``x`` and its UTF-8 bytes in hex."""
    if _SAFE.fullmatch(text) and len(text) <= 120:
        return text
    return "x" + text.encode("utf-8").hex()[:200]


def _embed(data: Any) -> str:
    """JSON that can sit inside a <script> element: no ``</script>``, no ``<!--``."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def shell(
    page: str,
    *,
    title: str,
    base: str = "/",
    mode: Mode = "live",
    params: dict[str, Any] | None = None,
    data: Any = None,
    status_text: str = "",
) -> str:
    """One page: ``params`` say what to show (run key, task, trial); ``data`` is embedded when
    given (exported pages); ``status_text`` is shown before the script runs (errors)."""
    if page not in PAGES:
        raise ValueError(f"unknown page {page!r}")
    embedded = (
        f'<script id="page-data" type="application/json">{_embed(data)}</script>\n'
        if data is not None
        else ""
    )
    attrs = html.escape(json.dumps(params or {}, ensure_ascii=False), quote=True)
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="{html.escape(base)}static/style.css">
</head>
<body data-page="{page}" data-base="{html.escape(base)}" data-mode="{mode}" data-params="{attrs}">
<header class="top">
  <a class="brand" id="nav-home" href="#">agent-sandbox</a>
  <nav><a id="nav-runs" href="#">Runs</a> <a id="nav-leaderboard" href="#">Leaderboard</a>
  <a id="nav-compare" href="#">Compare</a></nav>
  <span id="live-status" class="muted"></span>
</header>
<main id="main"><p id="status" class="muted">{html.escape(status_text) or "Loading…"}</p>
<noscript>This viewer needs JavaScript.</noscript></main>
{embedded}<script src="{html.escape(base)}static/app.js"></script>
</body>
</html>
"""
