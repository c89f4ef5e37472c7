"""Worlds: what a stateful call, a snapshot and a search's states cost (issue 35, item 11).

Measured in one run, each as a ratio to its anchor:

- **read and write calls** on a world of 100,000 records against a stateless recorded hit, all
  three through the same in-process app (``httpx.ASGITransport``, the path of every run), in one
  session, median of rounds: a read (``get_account``) <= 1.5x the hit, a write (``transfer``:
  two records and an id counter changed) <= 3x;
- **snapshot + restore** (``POST /sessions/{s}/snapshot`` then ``.../restore`` to an earlier
  state) at 1,000,000 records against 1,000 records: within 2x (a restore is a switch to a
  snapshot, whatever the world's size);
- **the hash after a write** (a transaction's commit) at 1,000,000 records against 1,000 (flat:
  O(records changed), not O(world)), and a write of 10 records against a write of 1 (linear in
  what changed);
- **memory of 1,000 search nodes** over a 100,000-record world: every state of a tree of 1,000
  writes, each from a random earlier state, kept at once (tracemalloc), against the world's own
  memory: <= 2x.
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

from bench.report import BenchResult
from mock_tools import create_app, in_process_client, load_suite
from mock_tools.worlds.state import State

WORLD = '''
from mock_tools.worlds import Context, ToolError, World, read, write


class Ledger(World):
    name = "ledger"

    @read
    def get_account(self, ctx: Context, account_id: str) -> dict:
        """An account.

        Args:
            account_id: Its id.
        """
        found = ctx.db.get("accounts", account_id)
        if found is None:
            raise ToolError("no such account")
        return found

    @write
    def transfer(self, ctx: Context, source: str, target: str, amount: int) -> dict:
        """Move money.

        Args:
            source: From.
            target: To.
            amount: How much.
        """
        a, b = ctx.db.get("accounts", source), ctx.db.get("accounts", target)
        ctx.db.update("accounts", source, balance=a["balance"] - amount)
        ctx.db.update("accounts", target, balance=b["balance"] + amount)
        return {"id": ctx.new_id("transfers", "T-")}
'''

SEARCH_TOOL = {
    "name": "search",
    "apis": [
        {
            "name": "web",
            "description": "Search.",
            "parameters": {
                "type": "object",
                "properties": {"q": {"type": "string"}},
                "required": ["q"],
            },
        }
    ],
}


def _record(i: int) -> dict[str, Any]:
    return {"id": f"A-{i}", "owner": f"owner {i % 997}", "balance": 1_000 + i, "kind": "checking"}


def _suite(root: Path, records: int) -> Path:
    suite = root / f"ledger{records}"
    if suite.exists():
        return suite
    (suite / "state").mkdir(parents=True)
    (suite / "tools").mkdir()
    (suite / "recordings").mkdir()
    (suite / "suite.yaml").write_text("name: ledger\nworld: world.py:Ledger\n")
    (suite / "world.py").write_text(WORLD)
    (suite / "tools" / "search.yaml").write_text(json.dumps(SEARCH_TOOL))
    rec = {"tool": "search", "api": "web", "args": {"q": "oslo"}, "response": {"body": _record(1)}}
    (suite / "recordings" / "search.jsonl").write_text(json.dumps(rec) + "\n")
    with (suite / "state" / "accounts.jsonl").open("w") as fh:
        for i in range(records):
            fh.write(json.dumps(_record(i)) + "\n")
    return suite


async def _calls(suite: Path, rounds: int, per_round: int) -> dict[str, float]:
    """Median seconds per call of a recorded hit, a world read and a world write."""
    app = create_app(load_suite(suite))
    headers = {"X-Sandbox-Session": "bench"}
    async with in_process_client(app, headers=headers) as client:
        kinds = {
            "hit": ("/tools/search/web", lambda i: {"q": "oslo"}),
            "read": ("/tools/ledger/get_account", lambda i: {"account_id": f"A-{i % 50_000}"}),
            "write": (
                "/tools/ledger/transfer",
                lambda i: {
                    "source": f"A-{i % 50_000}",
                    "target": f"A-{50_000 + i % 49_999}",
                    "amount": 1,
                },
            ),
        }
        for url, args in kinds.values():  # warm every path
            for i in range(50):
                assert (await client.post(url, json=args(i))).status_code == 200
        medians: dict[str, list[float]] = {k: [] for k in kinds}
        for _ in range(rounds):
            for name, (url, args) in kinds.items():  # interleaved: load shifts hit all alike
                started = time.perf_counter()
                for i in range(per_round):
                    await client.post(url, json=args(i))
                medians[name].append((time.perf_counter() - started) / per_round)
    return {k: statistics.median(v) for k, v in medians.items()}


async def _snapshot_restore(suite: Path, repeats: int) -> float:
    """Median seconds of a snapshot then a restore to an earlier state, over HTTP."""
    app = create_app(load_suite(suite))
    async with in_process_client(app) as client:
        opened = (await client.post("/sessions", json={"session": "s"})).json()
        earlier = opened["state"]
        await client.post(
            "/tools/ledger/transfer",
            json={"source": "A-1", "target": "A-2", "amount": 1},
            headers={"X-Sandbox-Session": "s"},
        )
        times = []
        for _ in range(repeats):
            started = time.perf_counter()
            later = (await client.post("/sessions/s/snapshot")).json()["state"]
            await client.post("/sessions/s/restore", json={"state": earlier})
            times.append(time.perf_counter() - started)
            await client.post("/sessions/s/restore", json={"state": later})
    return statistics.median(times)


def _state(records: int) -> State:
    return State.from_documents(
        {
            "accounts": {
                f"A-{i}": {k: v for k, v in _record(i).items() if k != "id"} for i in range(records)
            }
        }
    )


def _commit_seconds(state: State, changed: int, repeats: int) -> float:
    """Median seconds of a transaction writing ``changed`` records and its commit (the hash)."""
    n = state.count("accounts")
    times = []
    for r in range(repeats):
        started = time.perf_counter()
        tx = state.begin()
        for j in range(changed):
            rid = f"A-{(r * 7919 + j * 104729) % n}"
            tx.update("accounts", rid, balance=r + j)
        tx.commit()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def _tree_memory(records: int, nodes: int) -> tuple[float, float]:
    """Bytes of the world's state, and bytes of ``nodes`` more states (a tree of writes, each
    from a random earlier state), all kept."""
    tracemalloc.start()
    base_before = tracemalloc.get_traced_memory()[0]
    state = _state(records)
    world = tracemalloc.get_traced_memory()[0] - base_before
    rng = random.Random(0)
    states = [state]
    for i in range(nodes):
        parent = states[rng.randrange(len(states))]
        tx = parent.begin()
        for j in range(2):
            rid = f"A-{rng.randrange(records)}"
            tx.update("accounts", rid, balance=i + j)
        tx.new_id("transfers", "T-")
        states.append(tx.commit()[0])
    total = tracemalloc.get_traced_memory()[0] - base_before
    tracemalloc.stop()
    return float(world), float(total - world)


def run(quick: bool = False) -> BenchResult:
    result = BenchResult("worlds")
    small, big = 1_000, 100_000 if quick else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        mid = _suite(root, 100_000)
        per_call = asyncio.run(
            _calls(mid, rounds=5 if quick else 9, per_round=200 if quick else 400)
        )
        for name, seconds in per_call.items():
            result.add(
                f"{name} call, 100,000-record world (in-process app)",
                seconds * 1e6,
                "µs",
                f"{name}_us",
            )
        read_ratio = per_call["read"] / per_call["hit"]
        write_ratio = per_call["write"] / per_call["hit"]
        result.add("read / recorded hit", read_ratio, "x", "read_ratio")
        result.add("write / recorded hit", write_ratio, "x", "write_ratio")
        result.target(
            "world read call (100,000 records)",
            read_ratio,
            "x",
            "a stateless recorded hit",
            at_most=1.5,
        )
        result.target(
            "world write call (100,000 records)",
            write_ratio,
            "x",
            "a stateless recorded hit",
            at_most=3.0,
        )

        restore: dict[int, float] = {}
        for n in (small, big):
            restore[n] = asyncio.run(_snapshot_restore(_suite(root, n), repeats=200))
            result.add(
                f"snapshot + restore, {n:,} records",
                restore[n] * 1e6,
                "µs",
                f"snapshot_restore_us_{n}",
            )
    restore_ratio = restore[big] / restore[small]
    result.add(
        f"snapshot + restore {big:,} / {small:,}", restore_ratio, "x", "snapshot_restore_ratio"
    )
    result.target(
        f"snapshot + restore at {big:,} records",
        restore_ratio,
        "x",
        f"the same at {small:,}",
        at_most=2.0,
    )

    commits: dict[tuple[int, int], float] = {}
    for n in (small, big):
        state = _state(n)
        for changed in (1, 10):
            commits[(n, changed)] = _commit_seconds(state, changed, repeats=300)
            result.add(
                f"write + hash, {changed} record(s) of {n:,}",
                commits[(n, changed)] * 1e6,
                "µs",
                f"commit_us_{changed}_{n}",
            )
        del state
    size_ratio = commits[(big, 1)] / commits[(small, 1)]
    changed_ratio = commits[(big, 10)] / commits[(big, 1)]
    result.add(
        f"hash after a write, {big:,} / {small:,} records", size_ratio, "x", "hash_size_ratio"
    )
    result.add(
        "hash after a write, 10 / 1 records changed", changed_ratio, "x", "hash_changed_ratio"
    )
    result.target(
        f"hash after a write at {big:,} records",
        size_ratio,
        "x",
        f"the same at {small:,}",
        at_most=2.0,
    )
    result.target(
        "hash after writing 10 records", changed_ratio, "x", "writing 1 record (linear: ~10)"
    )

    world, tree = _tree_memory(100_000, 1_000)
    result.add("world memory, 100,000 records", world / 2**20, "MiB", "world_mib")
    result.add("1,000 search states over it", tree / 2**20, "MiB", "tree_mib")
    result.target(
        "memory of 1,000 search nodes + the world",
        (world + tree) / world,
        "x",
        "the world alone",
        at_most=2.0,
    )
    return result
