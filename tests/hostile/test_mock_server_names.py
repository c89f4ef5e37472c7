"""Item 18 of the hardening issue: very long unknown names must not freeze the mock server."""

from __future__ import annotations

from typing import Any

import pytest
from rapidfuzz import fuzz

from mock_tools import PROVENANCE_HEADER, create_app, in_process_client, load_suite
from mock_tools import names as names_module
from mock_tools.names import NAME_MAX, SUGGEST_SHORTLIST, NameResolver
from tests.hostile.conftest import MINI


@pytest.mark.parametrize("where", ["tool", "api"])
async def test_18_names_longer_than_the_limit_are_refused_before_any_lookup(where) -> None:
    long = "w" * 900_000  # inside the 1 MB body limit
    tool, api = (long, "track_parcel") if where == "tool" else ("shipping", long)
    async with in_process_client(create_app(load_suite(MINI))) as client:
        virtual = {"tool_name": tool, "api_name": api, "tool_input": {}}
        r = await client.post("/virtual", json=virtual)
        assert r.status_code == 422
        assert r.json()["code"] == "name_too_long"
        native = (tool[:60_000], api[:60_000])  # as long as a URL may be
        r = await client.post("/tools/{}/{}".format(*native), json={})
        assert r.status_code == 422
        assert r.json()["code"] == "name_too_long"
        assert r.headers[PROVENANCE_HEADER] == "invalid"
        # a name at the limit is still looked up (and suggested for)
        r = await client.post(f"/tools/{'w' * NAME_MAX}/track_parcel", json={})
        assert r.status_code == 404 and r.json()["code"] == "unknown_api"
        assert r.json()["suggestions"]
        ok = await client.post("/tools/shipping/track_parcel", json={"parcel_id": "PX-100"})
        assert ok.status_code == 200


class _CountingFuzz:
    """``rapidfuzz.fuzz`` whose scorers count the pairs they compare, by scorer name."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = {}

    def __getattr__(self, name: str) -> Any:
        scorer = getattr(fuzz, name)

        def counted(*args: Any, **kwargs: Any) -> Any:
            self.calls[name] = self.calls.get(name, 0) + 1
            return scorer(*args, **kwargs)

        return counted


def test_18_suggestions_over_a_large_catalog_rank_only_a_short_list(monkeypatch) -> None:
    """The costly weighted ratio runs on a bounded short list whatever the catalog's size, and
    the cheap pass compares at most ``SUGGEST_QUERY_MAX`` characters of the wrong name."""
    pairs = [(f"tool{i}", f"api{j}") for i in range(2_000) for j in range(8)]
    resolver = NameResolver(pairs)
    counting = _CountingFuzz()
    monkeypatch.setattr(names_module, "fuzz", counting)

    assert resolver.suggest("tool17", "api3x")[0] == "tool17/api3"
    assert counting.calls["WRatio"] <= SUGGEST_SHORTLIST
    assert "ratio" not in counting.calls  # the tool's 8 APIs are a short list already

    counting.calls.clear()
    assert resolver.suggest("tool1999x", "api9" * 100_000)  # an unknown tool, a huge API name
    assert counting.calls["WRatio"] <= SUGGEST_SHORTLIST
    assert counting.calls["ratio"] == len(pairs)
