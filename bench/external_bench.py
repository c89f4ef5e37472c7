"""external: what running an agent as a process through the proxy costs the harness.

1. Per request, over real HTTP on 127.0.0.1 with one keep-alive client: a model request through
   the episode's proxy (``/v1/chat/completions``: parse, budget, the model, render, record)
   against the same model called directly, and a tool call through ``/call`` (interpretation,
   the tool env, recording) against the tool env called directly. The model answers at once
   (the offline ``reference`` model), so the difference is the proxy's share. Median of
   interleaved rounds.
2. Per episode: ``sandbox.run`` episodes of an agent that prints its answer at once
   (``cat > /dev/null; echo '{"answer": ...}'``) against ReAct with the ``reference`` model on
   the same tasks, one at a time: what starting the episode's server and process, and stopping
   them, adds to an episode (wall milliseconds per episode).
"""

from __future__ import annotations

import asyncio
import statistics
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import httpx

from agents.agent import EpisodeMeta
from agents.budget import Budget
from agents.models.reference import ReferenceModel
from agents.toolenv import FINISH_FUNCTION, env_dispatch
from agents.trajectory import Component
from bench.procs import DEFAULT_SUITE
from bench.report import BenchResult
from mock_tools import load_suite
from sandbox.external.gateway import episode_server
from sandbox.external.record import EpisodeRecord
from sandbox.external.scope import EpisodeScope
from sandbox.models.offline import reference_plan
from sandbox.run import run_suite
from sandbox.store.config import RunConfig
from sandbox.tool_envs import open_tool_envs

ROOT = Path(__file__).resolve().parents[1]
MINI = ROOT / "tests" / "fixtures" / "suites" / "mini"
TASK = "mini_g1_kettle_price"
SEARCH: dict[str, Any] = {"name": "search_products_for_shop", "arguments": {"query": "kettle"}}


def run(quick: bool) -> BenchResult:
    result = BenchResult("external")
    requests = 100 if quick else 400
    per_request = asyncio.run(_per_request(requests, rounds=3 if quick else 5))
    result.add("model request through the proxy", per_request["proxy_model"], "ms", "proxy_ms")
    result.add("model call direct", per_request["direct_model"], "ms", "direct_model_ms")
    result.add("tool call through /call", per_request["proxy_tool"], "ms", "call_ms")
    result.add("tool call direct", per_request["direct_tool"], "ms", "direct_tool_ms")
    episodes = _per_episode(4 if quick else 12)
    result.add("external episode (instant agent), wall", episodes["external"], "ms", "episode_ms")
    result.add("react episode (reference), wall", episodes["react"], "ms", "react_episode_ms")
    return result


async def _per_request(n: int, rounds: int) -> dict[str, float]:
    suite = load_suite(MINI)
    task = next(t for t in suite.tasks if t.id == TASK)
    out: dict[str, list[float]] = {}
    async with open_tool_envs(RunConfig(suite=str(MINI)), suite) as tools:
        for _ in range(rounds):
            timings = await _one_round(tools.for_episode(task, session=uuid.uuid4().hex), n)
            for key, value in timings.items():
                out.setdefault(key, []).append(value)
    return {key: statistics.median(values) for key, values in out.items()}


async def _one_round(env: Any, n: int) -> dict[str, float]:
    """One episode's server: ``n`` of each kind of request, through it and direct."""
    task = env.task
    model = ReferenceModel(reference_plan(task))
    functions = [*env.functions, FINISH_FUNCTION]
    messages = [{"role": "user", "content": task.query}]
    record = EpisodeRecord(
        agent=Component(name="external"),
        model=Component(name=model.name),
        meta=EpisodeMeta(scenario_id=task.id),
        query=task.query,
        functions=functions,
        dispatch=env_dispatch(env),
    )
    scope = EpisodeScope(
        model=model,
        env=env,
        record=record,
        budget=Budget(max_model_calls=None),
        max_observation_chars=2048,
    )
    body = {"model": "any", "messages": messages, "tools": functions}
    args = dict(SEARCH["arguments"])
    async with episode_server(scope) as urls, httpx.AsyncClient() as http:
        chat, call = f"{urls.base}/v1/chat/completions", f"{urls.base}/call"
        return {
            "proxy_model": await _timed(n, lambda: http.post(chat, json=body)),
            "direct_model": await _timed(n, lambda: model.complete(messages, functions)),
            "proxy_tool": await _timed(n, lambda: http.post(call, json=SEARCH)),
            "direct_tool": await _timed(n, lambda: env.call(SEARCH["name"], args)),
        }


async def _timed(n: int, make: Any) -> float:
    """Milliseconds per call of ``n`` sequential calls."""
    await make()  # warm
    started = time.perf_counter()
    for _ in range(n):
        await make()
    return (time.perf_counter() - started) * 1000 / n


def _per_episode(episodes: int) -> dict[str, float]:
    answer = '{"answer": "The cheapest kettle is the Steel Kettle (K-1) at 29.90 EUR."}'
    agents = {
        "external": ("external", {"command": f"cat > /dev/null; echo '{answer}'"}),
        "react": ("react", {}),
    }
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-external-") as tmp:
        for key, (agent, options) in agents.items():
            config = RunConfig(
                suite=str(DEFAULT_SUITE),
                agent=agent,
                agent_options=options,
                model="reference",
                concurrency=1,
                out=tmp,
                run_id=key,
            )
            config = config.with_values({"tasks": _first_tasks(episodes)})
            started = time.perf_counter()
            run_suite(config, show_progress=False)
            out[key] = (time.perf_counter() - started) * 1000 / episodes
    return out


def _first_tasks(n: int) -> list[str]:
    return [t.id for t in load_suite(DEFAULT_SUITE).tasks[:n]]
