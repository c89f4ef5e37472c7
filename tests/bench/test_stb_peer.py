"""The peer of the ``stb`` benchmark looks calls up as StableToolBench's server does (by the repr
of the arguments, in the API's cache file), and the cache it reads imports whole into a suite the
project serves with the same answers: the two servers are measured on the same calls."""

from __future__ import annotations

import json
from pathlib import Path

from bench.stb_bench import API, CATEGORY, TOOL, import_cache, request_body, write_cache
from bench.stb_peer import create_peer_app
from mock_tools import PROVENANCE_HEADER, create_app, in_process_client, load_suite

JSON = {"content-type": "application/json"}


def _table(cache: Path) -> dict:
    path = cache / CATEGORY / f"{TOOL}_for_{CATEGORY}" / f"{API}.json"
    return json.loads(path.read_text())


async def test_the_peer_answers_by_the_repr_of_the_arguments(tmp_path: Path) -> None:
    cache = write_cache(tmp_path / "cache", 10)
    table = _table(cache)
    async with in_process_client(create_peer_app(cache)) as client:
        r = await client.post("/virtual", content=request_body(10), headers=JSON)
        assert r.json() == table["{'city': 'city f', 'page': 5}"]
        swapped = json.loads(request_body(10))
        swapped["tool_input"] = json.dumps({"page": 5, "city": "city f"})  # other key order
        miss = await client.post("/virtual", json=swapped)
        assert miss.json()["error"] and miss.json()["response"] == ""


async def test_the_project_serves_the_imported_cache_with_the_same_answers(tmp_path: Path) -> None:
    cache = write_cache(tmp_path / "cache", 10)
    table = _table(cache)
    import_cache(cache, tmp_path / "suite", 10)
    app = create_app(load_suite(tmp_path / "suite"))
    async with in_process_client(app) as client:
        r = await client.post("/virtual", content=request_body(10), headers=JSON)
        assert r.headers[PROVENANCE_HEADER] == "hit"
        assert r.json() == table["{'city': 'city f', 'page': 5}"]
