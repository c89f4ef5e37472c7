"""harness: per-step overhead of the agent loop, concurrency scaling, scoring throughput.

1. Harness overhead per agent step: ReAct and DFSDT with the offline ``reference`` model over
   the default suite, in process, one episode at a time. The model answers instantly, so wall
   time over model calls is what the harness adds to every step (agent loop, in-process HTTP
   tool call, trajectory building). The reference model's own compute (its plan walk and
   token estimate) and the tool calls are timed separately and shown as shares. The best of a
   few rounds counts (the machine may be shared). ``run_suite`` end to end (run folder,
   labels, evaluator report) is reported beside it. When the harness share is above 1 ms a
   step, the table lists the project functions with the largest cumulative time (cProfile).
2. Concurrency: N episodes of ReAct against a model that sleeps a fixed latency L before each
   answer, at concurrency C. Wall time is compared with N-calls * L / C, and with the makespan
   a zero-overhead scheduler would reach for these episodes (episodes are indivisible, so at
   high C the longest episodes bound the wall time). Efficiency is that schedule over the
   wall time (goal: at least 0.9).
3. Scoring: the trajectories of DFSDT x ``noisy-reference:0.3`` runs of the default suite (one
   seed quick, four seeds in full: 232 distinct trajectories), replicated to 10,000 (distinct
   trial numbers), labelled (``label_run``), summarised with bootstrap intervals
   (``summarise``) and step-scored with rules and lexical similarity
   (``step_scores.score_run``). The goal: under 5 s.
4. ``sandbox eval`` of a run folder of 10,000 episodes (the seed-0 run replicated as the view
   benchmark does), as a user runs it: a subprocess, start-up, reading, labels, step scores,
   intervals, ``scores.json`` and ``report.md`` (and the plots in a second variant), median of
   interleaved rounds. Same goal.
"""

from __future__ import annotations

import asyncio
import cProfile
import heapq
import pstats
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.agent import EpisodeMeta
from agents.model import Message, Model, Turn
from agents.strategies import resolve_strategy
from agents.toolenv import Observation, ToolEnv
from agents.trajectory import Trajectory
from bench.procs import DEFAULT_SUITE, sandbox_command, wall
from bench.report import BenchResult
from bench.view_bench import large_run
from mock_tools import Suite, Task, create_app, in_process_client, load_suite
from sandbox.eval.pass_rate import label_run, summarise
from sandbox.eval.steps import step_scores
from sandbox.eval.steps.reason_score import LexicalSimilarity
from sandbox.models import build_models, resolve_model
from sandbox.run import run_suite
from sandbox.store import read_trajectories
from sandbox.store.config import RunConfig
from sandbox.tool_envs.http import HttpToolEnv

SUITE_DIR = DEFAULT_SUITE
SCORE_GOAL_S = 5.0
"""Issue 17, goal 5: 10,000 trajectories scored in under 5 s."""
EFFICIENCY_GOAL = 0.9
_PROJECT_DIRS = ("/agents/", "/sandbox/", "/mock_tools/")

ModelFor = Callable[[Task, int], Model]


@dataclass
class _Clock:
    """Seconds spent inside the model and the tool env, summed over a run's episodes."""

    model: float = 0.0
    tool: float = 0.0


class _TimedModel:
    """Delegates to ``inner`` and adds the time of each ``complete`` to ``clock.model``."""

    def __init__(self, inner: Model, clock: _Clock) -> None:
        self.inner = inner
        self.name = inner.name
        self.clock = clock

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        started = time.perf_counter()
        try:
            return await self.inner.complete(messages, tools, params)
        finally:
            self.clock.model += time.perf_counter() - started


class _TimedEnv:
    """Delegates to ``inner`` and adds the time of each ``call`` to ``clock.tool``."""

    def __init__(self, inner: ToolEnv, clock: _Clock) -> None:
        self.inner = inner
        self.clock = clock

    @property
    def functions(self) -> list[dict[str, Any]]:
        return self.inner.functions

    async def call(self, name: str, args: dict[str, Any]) -> Observation:
        started = time.perf_counter()
        try:
            return await self.inner.call(name, args)
        finally:
            self.clock.tool += time.perf_counter() - started


class _LatencyModel:
    """A model with a fixed latency: sleeps ``latency`` seconds, then asks ``inner``."""

    def __init__(self, inner: Model, latency: float) -> None:
        self.inner = inner
        self.name = f"{inner.name}+{latency * 1000:g}ms"
        self.latency = latency

    async def complete(
        self,
        messages: list[Message],
        tools: list[dict[str, Any]],
        params: dict[str, Any] | None = None,
    ) -> Turn:
        await asyncio.sleep(self.latency)
        return await self.inner.complete(messages, tools, params)


@dataclass
class _RunTiming:
    trajectories: list[Trajectory]
    wall: float
    clock: _Clock

    @property
    def model_calls(self) -> int:
        return sum(t.usage.model_calls for t in self.trajectories)


async def _episodes(
    suite: Suite,
    tasks: Sequence[Task],
    agent: str,
    model_for: ModelFor,
    concurrency: int,
    *,
    timed: bool = False,
) -> _RunTiming:
    """Run every task once, as the runner's episodes do, but without a run folder."""
    spec = resolve_strategy(agent)
    budget = RunConfig().budget_for()
    clock = _Clock()
    limit = asyncio.Semaphore(concurrency)
    async with in_process_client(create_app(suite), timeout=60.0) as client:

        async def one(task: Task) -> Trajectory:
            async with limit:
                http = HttpToolEnv(client, task, suite.apis, session=f"bench/{task.id}")
                env: ToolEnv = _TimedEnv(http, clock) if timed else http
                model = model_for(task, 0)
                if timed:
                    model = _TimedModel(model, clock)
                meta = EpisodeMeta(scenario_id=task.id, run_id="bench")
                try:
                    return await spec.build().run(
                        model=model, env=env, query=task.query, budget=budget, episode=meta
                    )
                finally:
                    await http.reset()

        started = time.perf_counter()
        trajectories = await asyncio.gather(*(one(t) for t in tasks))
        wall = time.perf_counter() - started
    return _RunTiming(list(trajectories), wall, clock)


def _reference_models() -> ModelFor:
    """The ``reference`` model of each episode; the name is resolved once (it reads
    ``models.yaml``), before any timing, as the runner does before its first episode."""
    factory = build_models(resolve_model("reference"))

    def model_for(task: Task, trial: int) -> Model:
        return factory.for_episode(task, seed=0, trial=trial)

    return model_for


def _profile_hint(suite: Suite, agent: str, reference: ModelFor, top: int = 5) -> list[str]:
    """The project functions with the largest cumulative time in one round of ``agent``."""
    profiler = cProfile.Profile()
    profiler.enable()
    asyncio.run(_episodes(suite, suite.tasks, agent, reference, 1))
    profiler.disable()
    stats = pstats.Stats(profiler)
    raw: dict[Any, Any] = stats.stats  # type: ignore[attr-defined]
    rows = []
    for (path, line, func), (_, calls, _tt, cumulative, _) in raw.items():
        if not any(d in path for d in _PROJECT_DIRS) or "/bench/" in path:
            continue
        short = path.split("/")[-2] + "/" + path.split("/")[-1]
        rows.append((cumulative, f"{short}:{line} {func}", calls))
    rows.sort(reverse=True)
    # the outermost frames (the agent's run) hold everything; skip them for a useful hint
    rows = [r for r in rows if not r[1].endswith((" run", " _run_async", " one"))]
    return [f"{name} ({calls} calls, {cum:.3f} s cum)" for cum, name, calls in rows[:top]]


def _step_overhead(result: BenchResult, suite: Suite, rounds: int) -> None:
    reference = _reference_models()
    for agent in ("react", "dfsdt"):
        asyncio.run(_episodes(suite, suite.tasks, agent, reference, 1))  # warm-up
        best: _RunTiming | None = None
        for _ in range(rounds):
            timing = asyncio.run(_episodes(suite, suite.tasks, agent, reference, 1, timed=True))
            if best is None or timing.wall < best.wall:
                best = timing
        assert best is not None
        steps = best.model_calls
        per_step = best.wall / steps * 1000
        model_share = best.clock.model / steps * 1000
        tool_share = best.clock.tool / steps * 1000
        harness = per_step - model_share
        result.figures[f"{agent}_steps"] = steps
        result.add(f"{agent}: ms per step, all in", per_step, "ms", f"{agent}_ms_per_step")
        result.add(f"{agent}:   of which reference model", model_share, "ms", f"{agent}_ms_model")
        result.add(
            f"{agent}:   of which tool call (HTTP in-process)",
            tool_share,
            "ms",
            f"{agent}_ms_tool_call",
        )
        result.add(
            f"{agent}:   of which agent loop + trajectory",
            harness - tool_share,
            "ms",
            f"{agent}_ms_loop",
        )
        result.add(
            f"{agent}: harness ms per step (excl. model)", harness, "ms", f"{agent}_ms_harness"
        )
        if harness > 1.0:
            hint = _profile_hint(suite, agent, reference)
            result.figures[f"{agent}_profile_top"] = hint
            for i, line in enumerate(hint, 1):
                result.rows.append((f"{agent}:   profile #{i}", line))

    rounds_e2e = []
    for _ in range(2):
        with tempfile.TemporaryDirectory() as tmp:
            config = RunConfig(agent="react", model="reference", concurrency=1, out=tmp)
            started = time.perf_counter()
            run = run_suite(config, show_progress=False)
            rounds_e2e.append((time.perf_counter() - started) / run.usage.model_calls * 1000)
    result.add(
        "react: run_suite end to end, ms per step", min(rounds_e2e), "ms", "react_ms_per_step_e2e"
    )


def _ideal_makespan(calls: Sequence[int], latency: float, concurrency: int) -> float:
    """Wall time of the episodes in submission order on ``concurrency`` slots, no overhead."""
    slots = [0.0] * concurrency
    for n in calls:
        start = heapq.heappop(slots)
        heapq.heappush(slots, start + n * latency)
    return max(slots)


async def _sleep_overshoot(latency: float, samples: int = 10) -> float:
    """Mean seconds an ``asyncio.sleep(latency)`` takes beyond ``latency`` (timer granularity),
    part of every wall time below and of no harness's making."""
    started = time.perf_counter()
    for _ in range(samples):
        await asyncio.sleep(latency)
    return (time.perf_counter() - started) / samples - latency


def _concurrency(
    result: BenchResult,
    suite: Suite,
    tasks: Sequence[Task],
    latency: float,
    levels: Sequence[int],
) -> None:
    reference = _reference_models()

    def slow(task: Task, trial: int) -> Model:
        return _LatencyModel(reference(task, trial), latency)

    result.figures["concurrency_latency_ms"] = latency * 1000
    result.add(
        f"asyncio.sleep({latency * 1000:g}ms) overshoot per call",
        asyncio.run(_sleep_overshoot(latency)) * 1000,
        "ms",
        "sleep_overshoot_ms",
    )
    result.figures["concurrency_episodes"] = len(tasks)
    for c in levels:
        timing = asyncio.run(_episodes(suite, tasks, "react", slow, c))
        calls = [t.usage.model_calls for t in timing.trajectories]
        ideal = sum(calls) * latency / c
        schedule = _ideal_makespan(calls, latency, c)
        label = f"N={len(tasks)} L={latency * 1000:g}ms C={c}"
        result.figures[f"c{c}_model_calls"] = sum(calls)
        result.add(f"{label}: wall", timing.wall, "s", f"c{c}_wall_seconds")
        result.add(f"{label}: ideal calls*L/C", ideal, "s", f"c{c}_ideal_seconds")
        result.add(f"{label}: ratio wall / ideal", timing.wall / ideal, "", f"c{c}_ratio")
        result.add(
            f"{label}: ratio wall / zero-overhead schedule",
            timing.wall / schedule,
            "",
            f"c{c}_ratio_schedule",
        )
        efficiency = schedule / timing.wall
        result.add(f"{label}: efficiency (schedule / wall)", efficiency, "", f"c{c}_efficiency")
        result.figures[f"c{c}_efficiency_goal_met"] = efficiency >= EFFICIENCY_GOAL


def _base_trajectories(seeds: Sequence[int], out: str) -> tuple[list[Trajectory], Path]:
    """DFSDT x ``noisy-reference:0.3`` runs of the default suite, one per seed: their
    trajectories, and the folder of the first run."""
    trajs: list[Trajectory] = []
    first: Path | None = None
    for seed in seeds:
        config = RunConfig(agent="dfsdt", model="noisy-reference:0.3", seed=seed, out=out)
        path = Path(run_suite(config, show_progress=False, plots=False).path)
        first = first or path
        trajs.extend(read_trajectories(path))
    assert first is not None
    return trajs, first


def _scoring(result: BenchResult, suite: Suite, count: int, seeds: Sequence[int]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        base, _ = _base_trajectories(seeds, tmp)
    per_run = len(base) // len(seeds)  # base is the runs one after another, one per seed

    def trial(i: int) -> int:  # distinct (task, trial) over the replicas and the seeds
        return i // len(base) * len(seeds) + i % len(base) // per_run

    trajs = [base[i % len(base)].model_copy(update={"trial": trial(i)}) for i in range(count)]
    tasks = suite.tasks
    tasks_by_id = {t.id: t for t in tasks}
    started = time.perf_counter()
    labels = label_run(trajs, tasks)
    labelled = time.perf_counter()
    summary = summarise(labels, tasks, seed=0)
    summarised = time.perf_counter()
    step_scores.score_run(trajs, tasks_by_id, suite.apis, similarity=LexicalSimilarity())
    done = time.perf_counter()
    if summary.n != count:
        raise AssertionError(f"scored {summary.n} episodes, expected {count}")
    total = done - started
    n = f"{count:,}"
    result.add(f"score {n}: label_run", labelled - started, "s", "score_label_seconds")
    result.add(f"score {n}: summarise (bootstrap)", summarised - labelled, "s", "score_summary_s")
    result.add(f"score {n}: step_scores.score_run", done - summarised, "s", "score_steps_seconds")
    result.add(f"score {n}: total", total, "s", "score_total_seconds")
    result.add(f"score {n}: trajectories per second", count / total, "/s", "score_per_second")
    result.add(
        f"score {n}: share of the {SCORE_GOAL_S:g} s goal",
        total / SCORE_GOAL_S,
        "",
        "score_vs_goal",
    )
    result.figures["score_trajectories"] = count
    result.figures["score_distinct_base"] = len(base)


def _eval_folder(result: BenchResult, count: int, rounds: int) -> None:
    """``sandbox eval`` (a subprocess, start-up included) of a run folder of ``count`` episodes,
    with and without plots, in interleaved rounds; the median counts."""
    with tempfile.TemporaryDirectory() as tmp:
        _, first = _base_trajectories((0,), tmp)
        big = Path(tmp) / "large"
        large_run(first, big, count)
        sandbox = sandbox_command()
        variants = {"eval_no_plots": ["--no-plots"], "eval_plots": []}
        times: dict[str, list[float]] = {name: [] for name in variants}
        for _ in range(rounds):
            for name, extra in variants.items():
                times[name].append(wall([*sandbox, "eval", str(big), "--json", *extra]))
    n = f"{count:,}"
    for name, label in (("eval_no_plots", "--no-plots"), ("eval_plots", "with plots")):
        median = statistics.median(times[name])
        result.add(f"sandbox eval of a {n}-episode run ({label})", median, "s", f"{name}_s")
        result.add(
            f"  share of the {SCORE_GOAL_S:g} s goal", median / SCORE_GOAL_S, "", f"{name}_vs_goal"
        )
    result.figures["eval_episodes"] = count
    result.figures["eval_rounds"] = rounds


def run(quick: bool = False) -> BenchResult:
    result = BenchResult("harness")
    suite = load_suite(SUITE_DIR)
    _step_overhead(result, suite, rounds=2 if quick else 5)
    if quick:
        _concurrency(result, suite, suite.tasks[:20], 0.02, (1, 8))
    else:
        _concurrency(result, suite, suite.tasks, 0.05, (1, 8, 32))
    _scoring(result, suite, 1_000 if quick else 10_000, (0,) if quick else (0, 1, 2, 3))
    _eval_folder(result, 2_000 if quick else 10_000, 1 if quick else 3)
    return result
