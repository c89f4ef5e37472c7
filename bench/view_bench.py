"""view: how fast the viewer lists runs, and shows a large run and one of its episodes.

Setup: one DFSDT x ``noisy-reference:0.3`` run of the default suite (58 real trajectories),
replicated into a run of 10,000 episodes (distinct trial numbers, ~170 trials per task) with a
real manifest and a real ``scores.json`` from ``evaluate_run``; beside it, 20 copies of the small
run, as a runs folder that has been used for a while.

Measured, each the best of a few rounds, each round with fresh objects (no cache of the viewer):

1. the index (``Catalog.runs()``: the 21 runs from manifests and scores only), and the same
   through the web app (``GET /api/runs``, in process); the budget is under a second;
2. the index again with the trajectories file of the large run moved away: the same time, since
   the index never reads trajectories;
3. the large run's page: its episode table, first shown (every trajectory line parsed once with
   ``json``) and shown again (a poll: nothing new to parse);
4. an episode page of the large run: the first one (the lines located from their first bytes,
   the suite's YAML loaded for the task) and another one (one line read, the tree marked).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench.procs import DEFAULT_SUITE
from bench.report import BenchResult
from bench.scale_bench import replicate
from sandbox.eval.evaluate import evaluate_run
from sandbox.eval.report import write_report
from sandbox.run import run_suite
from sandbox.store import RunConfig, read_trajectories
from sandbox.view.catalog import Catalog
from sandbox.view.viewer import Viewer

SUITE_DIR = DEFAULT_SUITE
SMALL_COPIES = 20


def _best(fn: Callable[[], object], rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        started = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - started)
    return best


def large_run(base: Path, dest: Path, count: int) -> None:
    """``base`` replicated to ``count`` episodes in ``dest``, evaluated like any run."""
    replicate(base, dest, count)
    write_report(dest, evaluate_run(dest, SUITE_DIR), plots=False)


def run(quick: bool = False) -> BenchResult:
    result = BenchResult("view")
    count = 2_000 if quick else 10_000
    rounds = 3 if quick else 5
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        config = RunConfig(
            suite=str(SUITE_DIR), agent="dfsdt", model="noisy-reference:0.3", out=str(root)
        )
        small = Path(run_suite(config, show_progress=False).path)
        for i in range(SMALL_COPIES - 1):
            shutil.copytree(small, root / f"copy-{i:02d}")
        big = root / "large"
        built = time.perf_counter()
        large_run(small, big, count)
        result.add(
            f"setup: {count:,}-episode run evaluated", time.perf_counter() - built, "s", "setup_s"
        )
        sizes = {p.name: p.stat().st_size for p in big.iterdir()}

        def index() -> None:
            runs = Catalog(root).runs()
            if len(runs) != SMALL_COPIES + 1:
                raise AssertionError(f"listed {len(runs)} runs")
            large = next(r for r in runs if r.key == "large")
            if large.episodes != count or large.finished != count or large.pass_rate is None:
                raise AssertionError(f"the large run is listed as {large}")

        def index_http() -> None:
            from fastapi.testclient import TestClient

            from sandbox.view.app import create_app

            with TestClient(create_app(root)) as client:
                if len(client.get("/api/runs").json()) != SMALL_COPIES + 1:
                    raise AssertionError("GET /api/runs")

        t_index = _best(index, rounds)
        result.add(
            f"index: {SMALL_COPIES + 1} runs, one of {count:,} episodes", t_index, "s", "index_s"
        )
        result.add("index through GET /api/runs", _best(index_http, rounds), "s", "index_http_s")
        aside = Path(tmp) / "aside.jsonl"
        shutil.move(big / "trajectories.jsonl", aside)
        t_without = _best(index, rounds)
        shutil.move(aside, big / "trajectories.jsonl")
        result.add("index, large run's trajectories moved away", t_without, "s", "index_no_traj_s")

        base = read_trajectories(small)
        first, other = (base[0].scenario_id, count // len(base) - 1), (base[1].scenario_id, 3)
        warm = Viewer(root)

        def run_page(viewer: Viewer | None = None) -> None:
            rows = (viewer or Viewer(root)).episodes("large")
            if len(rows) != count:
                raise AssertionError(f"{len(rows)} rows")

        def episode_page(viewer: Viewer | None, key: tuple[str, int]) -> None:
            ep = (viewer or Viewer(root)).episode("large", key[0], key[1])
            if ep.trajectory["trial"] != key[1] or not ep.marks:
                raise AssertionError("wrong episode")

        t_cold = _best(run_page, rounds)
        result.add(f"run page: table of {count:,} episodes, first", t_cold, "s", "run_page_s")
        run_page(warm)
        t_poll = _best(lambda: run_page(warm), rounds)
        result.add("run page: shown again (a poll)", t_poll, "s", "run_page_poll_s")
        t_ep = _best(lambda: episode_page(None, first), rounds)
        result.add("episode page: the first (suite loaded)", t_ep, "s", "episode_first_s")
        episode_page(warm, first)
        t_next = _best(lambda: episode_page(warm, other), rounds)
        result.add("episode page: another one", t_next, "s", "episode_s")
        result.figures["episodes"] = count
        result.figures["bytes"] = sizes
        result.figures["index_budget_s"] = 1.0
        result.figures["index_within_budget"] = t_index < 1.0
    return result


if __name__ == "__main__":
    print(json.dumps(run(quick=True).figures, indent=2))
