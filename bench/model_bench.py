"""model: the model round trip, durable writes and suite loading on the k=3 workload.

The workload (``bench.k3_suite``): a generated suite of 2,000 tasks (``--quick``: 300) in one
task file, each solved by three tool calls and an answer; ReAct, the in-process tool server, the
default concurrency. Two models make the same four calls per episode:

- the offline floor: the ``reference`` model (no HTTP, no SDK);
- an HTTP model: ``openai:k3@http://127.0.0.1:PORT/v1``, the ``bench.fake_model`` server in
  its own process (uvicorn, raw ASGI), through ``OpenAICompatModel`` and the openai SDK.

Each run is ``run_suite`` in a fresh interpreter, after a warm-up run of 20 tasks in the same
interpreter (imports, the suite's caches); its CPU is the process's user + system time over the
run (``getrusage``: the group-commit thread included, the fake server not), so the figures are
what the harness costs, whatever the machine's load does to wall time. The two models run in
interleaved rounds; a ratio is the median of the ratios paired within a round. Targets (issue
29): CPU per model call through the HTTP model <= 2x the floor's, and <= 4 ms CPU per episode.

Suite loading: ``load_valid_suite`` of the 2,000-task suite in a fresh interpreter with its
recording index and validity marker cached, once with its YAML documents' cache removed (the
YAML parsed, as a first load does) and once with it (median of rounds each).
"""

from __future__ import annotations

import statistics
import tempfile
import textwrap
from pathlib import Path

from bench.cores import CoreLayout
from bench.http_servers import Server
from bench.k3_suite import write_k3_suite
from bench.procs import child_json
from bench.report import BenchResult

EPISODE_CPU_GOAL_MS = 4.0
RATIO_GOAL = 2.0

_RUN_CHILD = textwrap.dedent(
    """
    import json, os, resource, sys, time

    from sandbox.run import run_suite
    from sandbox.store import RunConfig

    suite, model, out, durable = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "fsync"
    fsyncs = [0]
    real_fsync = os.fsync

    def counted_fsync(fd):
        fsyncs[0] += 1
        if durable:
            real_fsync(fd)

    os.fsync = counted_fsync

    def cpu():
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    def run(run_id, tasks=None):
        values = {"output.run_id": run_id}
        if tasks:
            values["tasks"] = tasks
        config = RunConfig(suite=suite, agent="react", model=model, out=out).with_values(values)
        return run_suite(config, show_progress=False)

    run("warm-up", [f"k3_{i:05d}" for i in range(20)])
    c0, w0, f0 = cpu(), time.perf_counter(), fsyncs[0]
    result = run("measured")
    cpu_s, wall_s = cpu() - c0, time.perf_counter() - w0
    print(json.dumps({
        "cpu_s": cpu_s, "wall_s": wall_s, "episodes": result.episodes,
        "model_calls": result.usage.model_calls, "pass_rate": result.pass_rate,
        "fsyncs": fsyncs[0] - f0,
    }))
    """
)

_LOAD_CHILD = textwrap.dedent(
    """
    import json, sys, time
    from pathlib import Path

    from mock_tools.validate import load_valid_suite

    started = time.perf_counter()
    suite = load_valid_suite(Path(sys.argv[1]))
    print(json.dumps({"seconds": time.perf_counter() - started, "tasks": len(suite.tasks)}))
    """
)


_SDK_CHILD = "import sys\nfrom bench.sdk_cost import main\nmain(sys.argv[1:])\n"


def _run(suite: Path, model: str, out: Path, fsync: str = "fsync") -> dict[str, float]:
    """One measured run in a fresh interpreter; ``fsync="none"``: ``os.fsync`` does nothing (the
    anchor of durable writes: what the run costs without any)."""
    figures = child_json(_RUN_CHILD, suite, model, out, fsync)
    if figures["pass_rate"] != 1.0:
        raise RuntimeError(f"the k=3 workload did not solve every task with {model}: {figures}")
    return dict(figures)


def _loads(suite: Path, rounds: int) -> tuple[float, float]:
    """Median seconds of a load that parses the YAML and of one from the documents' cache."""
    cache = suite / ".cache" / "suite-docs.json"
    child_json(_LOAD_CHILD, suite)  # index, validity marker and documents cached
    kept = cache.read_bytes()
    yaml_s, cached_s = [], []
    for _ in range(rounds):
        cache.unlink()
        yaml_s.append(child_json(_LOAD_CHILD, suite)["seconds"])
        cache.write_bytes(kept)
        cached_s.append(child_json(_LOAD_CHILD, suite)["seconds"])
    return statistics.median(yaml_s), statistics.median(cached_s)


def run(quick: bool = False, cores: CoreLayout | None = None) -> BenchResult:
    result = BenchResult("model")
    tasks, rounds = (300, 2) if quick else (2_000, 3)
    with tempfile.TemporaryDirectory() as tmp, Server("fake-model", cores=cores) as server:
        suite = write_k3_suite(Path(tmp) / "k3", tasks)
        http_model = f"openai:k3@http://127.0.0.1:{server.port}/v1"
        floor, http, ratios, durable = [], [], [], []
        for i in range(rounds):
            order = [("floor", "reference", "fsync"), ("http", http_model, "fsync")]
            order.append(("nofsync", "reference", "none"))
            runs = {}
            for name, model, fsync in order if i % 2 == 0 else order[::-1]:
                runs[name] = _run(suite, model, Path(tmp) / f"runs-{i}-{name}", fsync)
            per_call = {n: r["cpu_s"] / r["model_calls"] * 1000 for n, r in runs.items()}
            floor.append(runs["floor"] | {"per_call": per_call["floor"]})
            http.append(runs["http"] | {"per_call": per_call["http"]})
            ratios.append(per_call["http"] / per_call["floor"])
            durable.append(runs["nofsync"]["wall_s"] / runs["floor"]["wall_s"])
        yaml_s, cached_s = _loads(suite, rounds + 2)
        sdk = child_json(_SDK_CHILD, server.port, suite, 3 if quick else 5)

    _report(result, tasks, floor, http, statistics.median(ratios), (yaml_s, cached_s))
    _report_durable(result, floor, statistics.median(durable))
    _report_sdk(result, sdk, floor, http)
    result.figures["cores"] = (cores or CoreLayout()).as_json()  # the fake model's, by role
    return result


def _report_sdk(
    result: BenchResult,
    sdk: dict[str, float],
    floor: list[dict[str, float]],
    http: list[dict[str, float]],
) -> None:
    """Item 1's remaining gap: the openai package's own CPU per call (``bench.sdk_cost``: the
    model call without a socket, less the bytes any client handles and the in-process server's
    answer), and the ratio a client without that cost would reach."""
    own_us = sdk["model"] - sdk["bytes"] - sdk["answer"]
    add = result.add
    add("model call without a socket (CPU per call)", sdk["model"], "µs", "sdk_model_us")
    add("  of which the bytes (dump request, parse answer)", sdk["bytes"], "µs", "sdk_bytes_us")
    add("  of which the in-process server's answer", sdk["answer"], "µs", "sdk_answer_us")
    add("  the client layers: openai package, our wrappers", own_us, "µs", "sdk_own_us")
    ratios = [
        (h["per_call"] - own_us / 1000) / f["per_call"] for f, h in zip(floor, http, strict=True)
    ]
    without = statistics.median(ratios)
    add("HTTP / floor without the package's own CPU", without, "x", "http_over_floor_no_sdk")
    result.target("1 model: CPU per call less the SDK's", without, "x", "offline floor")


def _report_durable(result: BenchResult, floor: list[dict[str, float]], ratio: float) -> None:
    """Item 2: the fsyncs the floor's run made per episode, and its episodes per second over
    the same run's with ``os.fsync`` doing nothing (paired within each round)."""
    eps = floor[0]["episodes"]
    per_episode = statistics.median(r["fsyncs"] for r in floor) / eps
    result.add("offline floor: fsyncs per episode (grouped)", per_episode, "", "fsyncs_per_ep")
    result.add("offline floor: episodes/s durable / without fsync", ratio, "x", "durable_ratio")
    result.target("2 durable writes: episodes/s", ratio, "x", "floor without fsync")


def _report(
    result: BenchResult,
    tasks: int,
    floor: list[dict[str, float]],
    http: list[dict[str, float]],
    ratio: float,
    loads: tuple[float, float],
) -> None:
    def med(runs: list[dict[str, float]], key: str, per: float = 1.0) -> float:
        return statistics.median(r[key] for r in runs) / per

    eps, calls = floor[0]["episodes"], floor[0]["model_calls"]
    add = result.add
    add("k=3 workload: episodes per run", eps, "", "episodes")
    add("  model calls per episode", calls / eps, "", "calls_per_episode")
    add("offline floor: CPU per model call", med(floor, "per_call"), "ms", "floor_cpu_ms_per_call")
    add("offline floor: CPU per episode", med(floor, "cpu_s", eps / 1000), "ms", "floor_cpu_ms_ep")
    add(
        "offline floor: wall per episode",
        med(floor, "wall_s", eps / 1000),
        "ms",
        "floor_wall_ms_ep",
    )
    add("HTTP model: CPU per model call", med(http, "per_call"), "ms", "http_cpu_ms_per_call")
    episode_ms = med(http, "cpu_s", eps / 1000)
    add("HTTP model: CPU per episode (goal <= 4 ms)", episode_ms, "ms", "http_cpu_ms_ep")
    add("HTTP model: wall per episode", med(http, "wall_s", eps / 1000), "ms", "http_wall_ms_ep")
    add("HTTP / floor, CPU per model call (goal <= 2x)", ratio, "x", "http_over_floor")
    result.figures["http_over_floor_met"] = ratio <= RATIO_GOAL
    result.figures["http_episode_goal_met"] = episode_ms <= EPISODE_CPU_GOAL_MS
    result.target("1 model: CPU per call", ratio, "x", "offline floor", at_most=RATIO_GOAL)
    result.target("1 model: CPU per episode", episode_ms, "ms", "", at_most=EPISODE_CPU_GOAL_MS)
    yaml_s, cached_s = loads
    add(f"load the {tasks}-task suite, YAML parsed", yaml_s * 1000, "ms", "suite_load_yaml_ms")
    add(
        f"load the {tasks}-task suite, from the cache",
        cached_s * 1000,
        "ms",
        "suite_load_cached_ms",
    )
    add("  YAML / cached", yaml_s / cached_s, "x", "suite_load_speedup")
    result.target("3 suite load, cached", cached_s * 1000, "ms", "")
    result.target("3 suite load, YAML / cached", yaml_s / cached_s, "x", "YAML parsed")
