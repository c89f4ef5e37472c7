"""``python -m bench.bfcl_agreement``: does BFCL's own checker label every entry as
``sandbox eval`` does?

Imports the first ``--per-category`` entries of each multi-turn category from a bfcl-eval wheel,
runs them with each ``--models`` (``reference``, ``noisy-reference``...) under ``--agent``,
exports each run as BFCL's result files (``sandbox export bfcl``), and runs BFCL's checker
(``bfcl evaluate``) on them in a separate environment that has bfcl-eval installed
(``--bfcl-python``: a virtualenv outside the project; the project never installs bfcl-eval).
It prints, per model and category, how many entries each side passes and how many labels
agree, then every disagreement with both sides' reasons; ``--twice`` also runs each model twice
and BFCL's checker twice on each export, and reports whether the runs' episodes (their nodes,
calls, observations and world verdicts) and the score files are identical. The JSON summary
goes to ``OUT/agreement-<agent>.json``. Nothing here is run by ``make bench``: it needs the wheel
and that environment (docs/benchmarks.md says how to make both).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

CATEGORIES = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
BFCL_MODEL = "gpt-4o-2024-11-20-FC"


def _sandbox(*args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "sandbox", *args], capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"sandbox {' '.join(args)} failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def _run(suite: Path, runs: Path, model: str, agent: str, run_id: str) -> Path:
    out = json.loads(
        _sandbox(
            "run",
            "--suite",
            str(suite),
            "--model",
            model,
            "--agent",
            agent,
            "--out",
            str(runs),
            "--run-id",
            run_id,
            "--no-plots",
            "--json",
        )
    )
    return Path(out["run"])


def _our_labels(run: Path) -> dict[str, dict[str, Any]]:
    scores = json.loads((run / "scores.json").read_text())
    return {lb["task_id"]: lb for lb in scores["labels"]}


def _bfcl_check(bfcl_python: str, root: Path) -> dict[str, dict[str, Any]]:
    """BFCL's checker on ``root/result``: entry id -> its error (absent: valid)."""
    # BFCL's handler makes an OpenAI client even to evaluate; the checker calls no model
    env = dict(os.environ, BFCL_PROJECT_ROOT=str(root), OPENAI_API_KEY="unused")
    bfcl = str(Path(bfcl_python).parent / "bfcl")
    done = subprocess.run(
        [
            bfcl,
            "evaluate",
            "--model",
            BFCL_MODEL,
            "--test-category",
            "multi_turn",
            "--partial-eval",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"bfcl evaluate failed: {done.stderr.strip()[-3000:]}")
    failures: dict[str, dict[str, Any]] = {}
    for path in sorted((root / "score" / BFCL_MODEL).rglob("*_score.json")):
        lines = path.read_text().splitlines()
        for line in lines[1:]:
            item = json.loads(line)
            failures[item["id"]] = item.get("error", {})
    return failures


def _episodes(run: Path) -> list[str]:
    """A run's episodes without what differs between two runs by design (times, run ids)."""
    out = []
    for line in (run / "trajectories.jsonl").read_text().splitlines():
        t = json.loads(line)
        for key in ("run_id", "started_at", "ended_at"):
            t.pop(key, None)
        t["usage"] = {k: v for k, v in t["usage"].items() if "seconds" not in k and "ms" not in k}
        for node in t["nodes"]:
            node.pop("started_at", None)
            node.pop("elapsed_ms", None)
            for call in node.get("calls") or []:
                if call.get("observation"):
                    call["observation"].pop("latency_ms", None)
        out.append(json.dumps(t, sort_keys=True))
    return sorted(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--wheel", required=True, type=Path)
    p.add_argument("--bfcl-python", required=True, help="python of a venv with bfcl-eval")
    p.add_argument("--out", required=True, type=Path)
    p.add_argument("--per-category", type=int, default=25)
    p.add_argument("--models", default="reference,noisy-reference")
    p.add_argument("--agent", default="react")
    p.add_argument("--twice", action="store_true")
    args = p.parse_args(argv)

    suite = args.out / "suite"
    if not (suite / "suite.yaml").exists():
        _sandbox(
            "import",
            "bfcl",
            str(args.wheel),
            "--limit",
            str(args.per_category),
            "--out",
            str(suite),
        )
    summary: dict[str, Any] = {"per_category": args.per_category, "models": {}}
    for model in args.models.split(","):
        tag = model.replace(":", "_")
        run = _run(suite, args.out / "runs", model, args.agent, f"{args.agent}-{tag}")
        ours = _our_labels(run)
        root = args.out / f"bfcl-{args.agent}-{tag}"
        _sandbox("export", "bfcl", str(run), "--out", str(root))
        theirs = _bfcl_check(args.bfcl_python, root)
        rows: dict[str, dict[str, int]] = {}
        disagreements = []
        for eid, label in sorted(ours.items()):
            category = eid.rsplit("_", 1)[0]
            mine = label["label"] == "solved"
            bfcl = eid not in theirs
            row = rows.setdefault(category, {"n": 0, "ours": 0, "bfcl": 0, "agree": 0})
            row["n"] += 1
            row["ours"] += mine
            row["bfcl"] += bfcl
            row["agree"] += mine == bfcl
            if mine != bfcl:
                disagreements.append(
                    {
                        "id": eid,
                        "sandbox": label["label"],
                        "sandbox_reason": label["reason"][:400],
                        "bfcl": "valid" if bfcl else theirs[eid].get("error_type"),
                        "bfcl_reason": str(theirs.get(eid, {}).get("error_message", ""))[:400],
                    }
                )
        entry: dict[str, Any] = {"run": str(run), "rows": rows, "disagreements": disagreements}
        if args.twice:
            again = _run(suite, args.out / "runs", model, args.agent, f"{args.agent}-{tag}-again")
            entry["runs_identical"] = _episodes(run) == _episodes(again)
            first = {p.name: p.read_text() for p in (root / "score").rglob("*_score.json")}
            _bfcl_check(args.bfcl_python, root)
            second = {p.name: p.read_text() for p in (root / "score").rglob("*_score.json")}
            entry["scores_identical"] = first == second
        summary["models"][model] = entry
        print(f"{model} ({args.agent}):")
        for category, row in rows.items():
            print(
                f"  {category:26} n={row['n']:3} sandbox={row['ours']:3} bfcl={row['bfcl']:3} "
                f"agree={row['agree']:3}"
            )
        for d in disagreements:
            print(f"  DISAGREE {d['id']}: sandbox {d['sandbox']} ({d['sandbox_reason'][:160]})")
            print(f"           bfcl {d['bfcl']} ({d['bfcl_reason'][:160]})")
        for key in ("runs_identical", "scores_identical"):
            if key in entry:
                print(f"  {key}: {entry[key]}")
    (args.out / f"agreement-{args.agent}.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
