"""ray: episodes per second on a local 2-CPU Ray against ``--executor local``, and the overhead.

The same run with each executor: ReAct with the offline ``reference`` model over the default
suite, T trials (580 episodes; 116 with ``--quick``), ``--concurrency 4``. Once with the local
executor (asyncio in one process), once with ``--executor ray`` on a private local Ray with 2 CPUs
(two workers, two episodes in flight each, so a worker has its next episode while the driver
writes the last one). Each is run ``ROUNDS`` times and the best round counts (the machine may be
shared).
The reference model answers instantly, so every episode is CPU work: the harness, the agent loop
and the in-process mock tools; this is the case where a second process can help most, and where
Ray's own costs show most.

Reported (every episode written, fsynced, labelled and shown by the driver, as in any run):

- Ray start: ``ray.init`` of the local 2-CPU cluster (once per run without ``--ray-address``;
  zero when joining a running cluster);
- episodes per second of each executor over its episode phase (manifest ``started_at`` to
  ``ended_at``: the run folder's creation to the last episode written, scoring excluded); for
  Ray this includes starting the workers and shipping the suite;
- Ray's steady rate: episodes per second between the first and the last episode written;
- overhead per episode: worker CPU time per episode on Ray (2 / steady rate) minus the CPU time
  per episode of the local run (1 / local rate): what dispatching, pickling, the result's trip
  back and the driver's bookkeeping add to each episode;
- worker start: the episode phase minus what the steady rate explains.

The scores of the two runs are checked equal (wall times and run ids aside) before any figure is
reported. Skipped, with a row saying so, without the ``ray`` extra.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench.procs import DEFAULT_SUITE
from bench.report import BenchResult
from sandbox.run import run_suite
from sandbox.store import RunConfig, RunStore, read_trajectories

SUITE_DIR = DEFAULT_SUITE
ROUNDS = 2


def _phase_seconds(run: str) -> float:
    manifest = RunStore.open(run).manifest
    assert manifest.ended_at is not None
    return (manifest.ended_at - manifest.started_at).total_seconds()


def _steady_rate(run: str) -> float:
    ends = sorted(t.ended_at for t in read_trajectories(run) if t.ended_at is not None)
    span = (ends[-1] - ends[0]).total_seconds()
    return (len(ends) - 1) / span if span > 0 else float("inf")


def _comparable(run: str) -> str:
    def strip(value: object) -> object:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("wall_seconds", "run_id")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(json.loads(Path(run, "scores.json").read_text())))


def run(quick: bool = False) -> BenchResult:
    result = BenchResult("ray")
    try:
        import ray
    except ImportError:
        result.rows.append(("skipped", "the ray extra is not installed"))
        return result
    trials = 2 if quick else 10
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as tmp:
        base = RunConfig(
            suite=str(SUITE_DIR),
            agent="react",
            model="reference",
            trials=trials,
            concurrency=4,
            out=tmp,
        )
        rounds = 1 if quick else ROUNDS
        locals_ = [
            run_suite(base.with_values({"output.run_id": f"local{k}"}), show_progress=False)
            for k in range(rounds)
        ]
        started = time.perf_counter()
        ray.init(
            address="local",
            num_cpus=2,
            include_dashboard=False,
            object_store_memory=100 * 1024 * 1024,
            log_to_driver=False,
            configure_logging=False,
        )
        ray_start = time.perf_counter() - started
        try:
            remotes = [
                run_suite(
                    base.with_values({"output.run_id": f"ray{k}", "executor.name": "ray"}),
                    show_progress=False,
                )
                for k in range(rounds)
            ]
        finally:
            ray.shutdown()
        local = min(locals_, key=lambda r: _phase_seconds(r.path))
        remote = min(remotes, key=lambda r: _phase_seconds(r.path))
        if _comparable(local.path) != _comparable(remote.path):
            raise AssertionError("the Ray run's scores differ from the local run's")
        n = local.episodes
        local_phase, ray_phase = _phase_seconds(local.path), _phase_seconds(remote.path)
        local_rate, ray_rate = n / local_phase, n / ray_phase
        steady = _steady_rate(remote.path)
        overhead_ms = (2 / steady - 1 / local_rate) * 1000
        result.add("episodes (react x reference, default suite)", n, "", "episodes")
        result.add("ray start (local, 2 CPUs)", ray_start, "s", "ray_start_seconds")
        result.add("local: episodes per second", local_rate, "/s", "local_episodes_per_second")
        result.add("ray: episodes per second", ray_rate, "/s", "ray_episodes_per_second")
        result.add("ray: steady episodes per second", steady, "/s", "ray_steady_per_second")
        result.add("ray / local (episode phase)", ray_rate / local_rate, "x", "ray_speedup")
        result.add("ray: overhead per episode (CPU)", overhead_ms, "ms", "ray_overhead_ms")
        result.add("ray: worker start", ray_phase - n / steady, "s", "ray_worker_start_seconds")
        result.add("local: ms per episode", 1000 / local_rate, "ms", "local_ms_per_episode")
    return result
