"""startup: how long the ``sandbox`` command takes to answer, and what it imports on the way.

Each command runs in a fresh interpreter (a subprocess, as a user starts it), in interleaved
rounds (one of each per round, so a busy moment of a shared machine hits all of them alike); the
median over the rounds counts. Measured:

1. ``python -c pass``: the floor, the interpreter alone (the baseline of the ratios);
2. ``sandbox --help`` and ``sandbox run --help`` (goal: under 0.4 s each);
3. an offline ``sandbox run --no-plots`` of the default suite with the default agent and model
   (no network, no plots: what must not import matplotlib or openai);
4. the ten modules that cost ``sandbox run --help`` the most import time of their own
   (``python -X importtime``: self time, with the cumulative time of the module beside it).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile

from bench.procs import ROOT, sandbox_command, wall
from bench.report import BenchResult

GOAL_SECONDS = 0.4
TOP_IMPORTS = 10


def _import_times(argv: list[str]) -> list[tuple[str, float, float]]:
    """``(module, self ms, cumulative ms)`` per module ``argv`` imports (``-X importtime``)."""
    env = {**os.environ, "PYTHONPROFILEIMPORTTIME": "1"}
    done = subprocess.run(argv, cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    rows = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = (part.strip() for part in line[len("import time:") :].split("|"))
        rows.append((name, int(own) / 1000, int(cumulative) / 1000))
    return rows


def run(quick: bool = False) -> BenchResult:
    result = BenchResult("startup")
    rounds = 5 if quick else 11
    sandbox = sandbox_command()
    with tempfile.TemporaryDirectory() as tmp:
        commands = {
            "python_floor": [sys.executable, "-c", "pass"],
            "help": [*sandbox, "--help"],
            "run_help": [*sandbox, "run", "--help"],
            "offline_run": [
                *sandbox,
                "run",
                "--suite",
                str(ROOT / "scenarios" / "default"),
                "--no-plots",
                "--json",
                "--out",
                tmp,
            ],
        }
        times: dict[str, list[float]] = {name: [] for name in commands}
        for argv in commands.values():  # warm the file cache once, untimed
            subprocess.run(argv, cwd=ROOT, check=True, capture_output=True)
        for _ in range(rounds):
            for name, argv in commands.items():
                times[name].append(wall(argv))
    median = {name: statistics.median(values) for name, values in times.items()}
    floor = median["python_floor"]
    result.figures["rounds"] = rounds
    result.add("python -c pass (floor, baseline)", floor, "s", "python_floor_s")
    labels = {
        "help": "sandbox --help",
        "run_help": "sandbox run --help",
        "offline_run": "sandbox run --no-plots (default suite, offline)",
    }
    for name, label in labels.items():
        result.add(f"{label}: median wall", median[name], "s", f"{name}_s")
        result.add(f"{label}: ratio to the floor", median[name] / floor, "x", f"{name}_vs_floor")
    for name in ("help", "run_help"):
        met = median[name] < GOAL_SECONDS
        result.figures[f"{name}_goal_met"] = met
        result.rows.append((f"{labels[name]} < {GOAL_SECONDS} s", "met" if met else "NOT met"))

    imports = _import_times([*sandbox, "run", "--help"])
    loaded = {name.strip() for name, _, _ in imports}
    heavy = sorted(
        m for m in ("fastapi", "openai", "matplotlib", "httpx", "networkx") if m in loaded
    )
    result.figures["run_help_heavy_imports"] = heavy
    result.rows.append(
        ("sandbox run --help imports of heavy libraries", ", ".join(heavy) or "none")
    )
    result.add(
        "sandbox run --help: total import time",
        sum(own for _, own, _ in imports),
        "ms",
        "run_help_import_ms",
    )
    top = sorted(imports, key=lambda row: row[1], reverse=True)[:TOP_IMPORTS]
    result.figures["run_help_top_imports"] = [
        {"module": name, "self_ms": round(own, 2), "cumulative_ms": round(cum, 2)}
        for name, own, cum in top
    ]
    for i, (name, own, cum) in enumerate(top, 1):
        result.rows.append((f"import #{i}: {name}", f"{own:.1f} ms self, {cum:.1f} ms cum"))
    return result
