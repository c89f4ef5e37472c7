"""The peer of the ``stb`` benchmark: StableToolBench's cache lookup, re-implemented.

This is our own minimal re-implementation of how StableToolBench's server (``server/main.py`` in
THUNLP-MT/StableToolBench) answers a cached call, written from a reading of its behaviour, not a
copy of its code. What it reproduces:

- a FastAPI app with ``POST /virtual`` taking a pydantic body of ``category``, ``tool_name``,
  ``api_name``, ``tool_input`` (a JSON string or an object), ``strip`` and ``toolbench_key``,
  served by a plain (not async) function, so FastAPI runs it in its thread pool;
- the names: the category with spaces, commas and slashes made ``_``, the tool standardised with
  ``_for_<category>`` appended, the API standardised (``is_`` before reserved words);
- the lookup: on every request, the API's cache file ``<cache>/<category>/<tool>_for_<category>/
  <api>.json`` is read from disk and parsed whole, and the call is looked up by ``str()`` of the
  parsed arguments dict (the Python repr, so key order and spelling matter), answering the cached
  ``{"error", "response"}`` object.

What it leaves out: everything after a cache miss (calling the real API, then a model that
simulates one, then writing the cache back); a miss here answers a fixed error. The cache layout
it reads is the one ``sandbox import stb-cache`` imports.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from pydantic import BaseModel

from mock_tools.names import api_identifier, standardize

__all__ = ["PeerRequest", "create_peer_app", "peer_category"]


class PeerRequest(BaseModel):
    category: str
    tool_name: str
    api_name: str
    tool_input: str | dict[str, Any]
    strip: str
    toolbench_key: str


def peer_category(category: str) -> str:
    text = category.replace(" ", "_").replace(",", "_").replace("/", "_")
    while "__" in text:
        text = text.replace("__", "_")
    return text


def create_peer_app(cache: Path) -> FastAPI:
    app = FastAPI()

    @app.post("/virtual")
    def virtual(request: PeerRequest) -> dict[str, Any]:
        category = peer_category(request.category)
        tool = request.tool_name
        if not tool.endswith(f"_for_{category}"):
            tool = f"{standardize(tool)}_for_{category}"
        api = api_identifier(request.api_name).split(f"_for_{tool}")[0]
        args: Any = request.tool_input
        if isinstance(args, str):
            try:
                args = json.loads(args) if args.strip() else {}
            except ValueError:
                return {"error": "Tool input parse error...\n", "response": ""}
        path = cache / category / tool / f"{api}.json"
        if path.is_file():
            with path.open() as f:
                table = json.load(f)  # the whole file, on every request
            answer = table.get(str(args))
            if answer is not None:
                print("cache hit")
                return answer
        return {"error": "no cached response (this peer simulates nothing)", "response": ""}

    return app
