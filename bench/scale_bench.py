"""scale: scoring in constant memory (issue 29, item 4) and compressed trajectories (item 5).

Setup: one DFSDT x ``noisy-reference:0.3`` run of the default suite (58 episodes), run twice:
plain and with ``--compress``.

1. Bytes per episode of the default suite's episodes: ``trajectories.jsonl`` over its episodes,
   ``trajectories.jsonl.zst`` as the compressed run wrote it (one zstd frame per group commit)
   and after a resume's compaction (frames of ~256 KB of lines). The target: at most Inspect's
   5.2 KB per episode (its compressed ``.eval`` log, measured in issue 29's study); the ratio is
   ours over Inspect's.
2. ``sandbox eval --no-plots`` of the run replicated to 2,000 and to 100,000 episodes (20,000
   with ``--quick``; distinct trial numbers, as ``bench.view_bench`` replicates), each in a fresh
   interpreter that reports its peak RSS (``ru_maxrss``) and the wall time of the command (start
   of ``main`` to its end: reading, labels, step scores, intervals, ``scores.json`` and
   ``report.md``). Targets: the large run's peak RSS under 500 MB, and its time per episode at
   most 2x the small run's.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from bench.procs import DEFAULT_SUITE, child_json
from bench.report import BenchResult
from sandbox.run import resume_run, run_suite
from sandbox.store import RunConfig, RunStore, read_trajectories
from sandbox.store.trajectory_file import COMPRESSED, PLAIN

INSPECT_KB_PER_EPISODE = 5.2
RSS_GOAL_MB = 500.0
TIME_RATIO_GOAL = 2.0

_EVAL = """
import json, resource, sys, time
from sandbox.cli import main
started = time.perf_counter()
code = main(["eval", sys.argv[1], "--no-plots", "--json"])
wall = time.perf_counter() - started
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"code": code, "wall_s": wall, "rss_mb": rss}))
"""


def replicate(base: Path, dest: Path, count: int) -> None:
    """``base`` replicated to ``count`` episodes (distinct trials) in the run folder ``dest``,
    not scored (``bench.view_bench.large_run`` scores it too)."""
    trajs = read_trajectories(base)
    manifest = RunStore.open(base).manifest
    manifest.run_id = dest.name
    manifest.episodes = [(trajs[i % len(trajs)].scenario_id, i // len(trajs)) for i in range(count)]
    manifest.config = manifest.config.with_values(
        {"trials": -(-count // len(trajs)), "output.run_id": dest.name}
    )
    dest.mkdir(parents=True)
    RunStore(dest, manifest).write_manifest()
    with (dest / PLAIN).open("w", encoding="utf-8") as fh:
        for i in range(count):
            t = trajs[i % len(trajs)]
            fh.write(
                t.model_copy(update={"trial": i // len(trajs), "run_id": dest.name}).to_json_line()
            )


def _bytes_per_episode(result: BenchResult, root: Path) -> None:
    config = RunConfig(
        suite=str(DEFAULT_SUITE), agent="dfsdt", model="noisy-reference:0.3", out=str(root)
    )
    plain = Path(
        run_suite(config.with_values({"output.run_id": "plain"}), show_progress=False).path
    )
    compressed = config.with_values({"output.run_id": "packed", "output.compress": True})
    packed = Path(run_suite(compressed, show_progress=False).path)
    episodes = len(read_trajectories(plain))
    raw = (plain / PLAIN).stat().st_size / episodes / 1000
    written = (packed / COMPRESSED).stat().st_size / episodes / 1000
    resume_run(packed, show_progress=False)  # nothing to run: compacts the file into big frames
    compacted = (packed / COMPRESSED).stat().st_size / episodes / 1000
    result.add(f"default suite: {episodes} episodes, plain", raw, "KB/episode", "plain_kb")
    result.add("compressed as written (a frame per group)", written, "KB/episode", "zst_kb")
    result.add("compressed after a resume's compaction", compacted, "KB/episode", "zst_compact_kb")
    result.add("compression ratio (plain / as written)", raw / written, "x", "zst_ratio")
    result.target(
        "5 trajectories: KB per episode",
        written / INSPECT_KB_PER_EPISODE,
        "x",
        "Inspect's 5.2 KB",
        at_most=1.0,
    )
    result.figures["episodes"] = episodes


def _scoring(result: BenchResult, root: Path, sizes: tuple[int, int]) -> None:
    base = root / "plain"
    figures = {}
    for count in sizes:
        dest = root / f"scale-{count}"
        built = time.perf_counter()
        replicate(base, dest, count)
        written = time.perf_counter() - built
        result.add(f"setup: {count:,}-episode run written", written, "s", f"setup_{count}_s")
        out = child_json(_EVAL, dest)
        if out["code"] != 0:
            raise RuntimeError(f"sandbox eval of {dest} exited {out['code']}")
        figures[count] = out
        result.add(f"eval {count:,}: peak RSS", out["rss_mb"], "MB", f"eval_{count}_rss_mb")
        per = out["wall_s"] / count * 1000
        result.add(f"eval {count:,}: time per episode", per, "ms", f"eval_{count}_ms_per_episode")
        (dest / PLAIN).unlink()  # the large file goes before the next is written
    small, large = (figures[n] for n in sizes)
    ratio = (large["wall_s"] / sizes[1]) / (small["wall_s"] / sizes[0])
    result.target(
        f"4 scoring {sizes[1]:,}: peak RSS", large["rss_mb"], "MB", "", at_most=RSS_GOAL_MB
    )
    result.target(
        f"4 scoring {sizes[1]:,}: time per episode",
        ratio,
        "x",
        f"{sizes[0]:,} episodes",
        at_most=TIME_RATIO_GOAL,
    )


def run(quick: bool = False) -> BenchResult:
    result = BenchResult("scale")
    sizes = (2_000, 20_000 if quick else 100_000)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "runs"
        _bytes_per_episode(result, root)
        _scoring(result, root, sizes)
    return result
