"""Recordings scoped to an episode answer first; a recorded call is served even when its
arguments fail the schema (ToolBench sent them as they were), new ones still get a 422."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mock_tools import (
    RECORDINGS_HEADER,
    SESSION_HEADER,
    RecordingStore,
    create_app,
    in_process_client,
    load_suite,
    validate_suite,
)
from mock_tools.models import Recording, Response

SHOP = ("shop", "order status")


def _rec(tool: str, api: str, args: dict[str, Any], body: Any, **extra: Any) -> dict[str, Any]:
    return {"tool": tool, "api": api, "args": args, "response": {"body": body}, **extra}


RECORDINGS = [
    _rec(*SHOP, {"order_id": "A1"}, {"status": "pending"}, occurrence=1),
    _rec(*SHOP, {"order_id": "A1"}, {"status": "shipped"}, occurrence=2),
]


def test_store_serves_a_scope_first_and_falls_back_to_unscoped() -> None:
    unscoped = Recording(tool="t", api="a", args={"x": 1}, response=Response(body="everyone"))
    mine = Recording(
        tool="t", api="a", args={"x": 1}, response=Response(body="mine"), scope="run/task-1"
    )
    store = RecordingStore([unscoped, mine])
    key = store.key("t", "a", {"x": 1})
    assert store.get("t", "a", key).body == "everyone"  # type: ignore[union-attr]
    assert store.get("t", "a", key, scope="run/task-1").body == "mine"  # type: ignore[union-attr]
    assert store.get("t", "a", key, scope="run/task-2").body == "everyone"  # type: ignore[union-attr]
    assert store.keys("t", "a") == [key]  # scoped recordings do not feed the nearest policy
    only_scoped = RecordingStore([mine])
    assert only_scoped.get("t", "a", key) is None and not only_scoped.has("t", "a", key)
    assert only_scoped.has("t", "a", key, scope="run/task-1")


async def test_scoped_occurrences_over_http(make_suite: Callable[..., Path]) -> None:
    scoped = [
        _rec(*SHOP, {"order_id": "A1"}, {"status": "lost"}, occurrence=1, scope="r/t2"),
        _rec(*SHOP, {"order_id": "A1"}, {"status": "found"}, occurrence=2, scope="r/t2"),
    ]
    app = create_app(load_suite(make_suite(recordings=RECORDINGS + scoped)))

    async def statuses(headers: dict[str, str]) -> list[str]:
        async with in_process_client(app, headers=headers) as client:
            out = []
            for _ in range(3):
                r = await client.post("/tools/shop/order status", json={"order_id": "A1"})
                out.append(r.json()["body"]["status"])
            return out

    async with app.router.lifespan_context(app):
        assert await statuses({SESSION_HEADER: "a"}) == ["pending", "shipped", "shipped"]
        mine = {SESSION_HEADER: "b", RECORDINGS_HEADER: "r/t2"}
        assert await statuses(mine) == ["lost", "found", "found"]
        other = {SESSION_HEADER: "c", RECORDINGS_HEADER: "r/t1"}
        assert await statuses(other) == ["pending", "shipped", "shipped"]


async def test_a_recorded_call_is_served_even_when_its_arguments_fail_the_schema(
    make_suite: Callable[..., Path],
) -> None:
    # "order status" requires order_id; ToolBench sent {"id": "A1"} and recorded the answer
    recorded = _rec(*SHOP, {"id": "A1"}, {"status": "no order id"})
    app = create_app(load_suite(make_suite(recordings=[*RECORDINGS, recorded])))
    async with app.router.lifespan_context(app), in_process_client(app) as client:
        r = await client.post("/tools/shop/order status", json={"id": "A1"})
        assert r.status_code == 200 and r.json()["body"] == {"status": "no order id"}
        new = await client.post("/tools/shop/order status", json={"id": "B2"})
        assert new.status_code == 422 and new.json()["code"] == "invalid_arguments"
        virtual = await client.post(
            "/virtual",
            json={"tool_name": "shop", "api_name": "order status", "tool_input": '{"id": "A1"}'},
        )
        assert virtual.json() == {"error": "", "response": {"status": "no order id"}}


def test_validate_accepts_schema_breaking_args_only_from_a_real_api(
    make_suite: Callable[..., Path],
) -> None:
    recorded = _rec(*SHOP, {"id": "A1"}, {"status": "no order id"})
    by_hand = make_suite("hand", recordings=[*RECORDINGS, recorded], tasks=[])
    assert any("order_id" in e for e in validate_suite(by_hand).errors)
    real = dict(recorded, provenance={"source": "toolbench"})
    assert validate_suite(make_suite("real", recordings=[*RECORDINGS, real], tasks=[])).ok
