"""``sandbox export bfcl RUN --out DIR``: a run on a BFCL import as BFCL's result files, so that
BFCL's own checker (``bfcl evaluate``) scores it.

BFCL's inference writes, per category, ``result/<model>/multi_turn/<prefix>_<category>_result.json``
with one JSON object per line: ``{"id": entry id, "result": turns}``, where ``turns`` holds one
list per turn of the entry, each holding one item per model step (a model response) of that turn,
each a list of ``{function name: arguments as JSON text}`` (what its OpenAI function-calling
handler records, and decodes into calls for the checker).

An episode is written from its chosen path: a user node that speaks starts the next turn (one
that ends the conversation does not); each node with
calls other than ``Finish`` is one step, its calls as the model wrote them (name and raw argument
text, an invented name or arguments that are no JSON object included: BFCL's checker executes or
skips them as it does a model's). Replies and ``Finish`` are not calls. Turns the episode never
reached (it gave up, or a budget ended it) are written empty, as BFCL's inference records a
model that stops calling. With several trials, each trial goes to its own model folder
(``<model>`` for trial 0, ``<model>-trial<k>`` after). May import ``agents`` records,
``mock_tools``, ``sandbox.store`` and ``sandbox.errors``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agents.toolenv import FINISH
from agents.trajectory import Trajectory
from mock_tools import Suite, load_suite
from mock_tools.errors import SuiteError
from mock_tools.worlds.bfcl import BfclSource, BfclSourceError
from sandbox.errors import ConfigError, RunError
from sandbox.store import read_trajectories
from sandbox.store.run_store import RunStore

__all__ = ["DEFAULT_MODEL", "bfcl_result", "export_bfcl"]

DEFAULT_MODEL = "gpt-4o-2024-11-20-FC"
"""The model folder the files go to: a name BFCL's checker knows, whose handler decodes OpenAI
function calls (``{name: arguments}``) as the files hold them."""


def bfcl_result(traj: Trajectory, turns: int) -> list[list[list[dict[str, str]]]]:
    """The ``result`` field of one episode (see the module docstring), ``turns`` turns long."""
    out: list[list[list[dict[str, str]]]] = [[]]
    for node_id in traj.chosen_path:
        node = traj.nodes[node_id]
        if node.kind == "user":
            if not (node.user or {}).get("signal"):  # a message starts a turn; a signal ends
                out.append([])
            continue
        step = [{c.name: c.arguments} for c in node.calls if c.name != FINISH]
        if step:
            out[-1].append(step)
    if len(out) > turns:
        raise RunError(
            f"episode {traj.scenario_id}#{traj.trial} has {len(out)} turns, its entry {turns}"
        )
    return out + [[] for _ in range(turns - len(out))]


def export_bfcl(run: Path, out: Path, *, model: str = DEFAULT_MODEL) -> dict[str, Any]:
    """Write the result files of a run (see the module docstring); returns a summary."""
    if not run.is_dir():
        raise RunError(f"no run folder at {run} (pass the folder runs/<run-id>)")
    manifest = RunStore.open(run).manifest
    suite = _suite(manifest.suite.path or manifest.config.suite)
    adapter = suite.meta.world_adapter
    if adapter is None or adapter.kind != "bfcl":
        raise ConfigError(f"{run}: its suite {suite.path} is not a BFCL import")
    prefix = _prefix(suite, adapter.source)
    trajectories = read_trajectories(run)
    if not trajectories:
        raise RunError(f"{run}: the run has no trajectories to export")
    tasks = {t.id: t for t in suite.tasks}
    files: dict[Path, list[dict[str, Any]]] = {}
    for traj in trajectories:
        task = tasks.get(traj.scenario_id)
        if task is None or task.group is None:
            raise RunError(f"{run}: episode {traj.scenario_id} is no task of {suite.path}")
        turns = 1 + len(task.user.script or []) if task.user is not None else 1
        folder = model if traj.trial == 0 else f"{model}-trial{traj.trial}"
        path = out / "result" / folder / "multi_turn" / f"{prefix}_{task.group}_result.json"
        files.setdefault(path, []).append(
            {"id": traj.scenario_id, "result": bfcl_result(traj, turns)}
        )
    for path, entries in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        entries.sort(key=lambda e: _order(str(e["id"])))
        text = "".join(json.dumps(e, ensure_ascii=False) + "\n" for e in entries)
        path.write_text(text, encoding="utf-8")
    return {
        "run": str(run),
        "out": str(out),
        "model": model,
        "episodes": len(trajectories),
        "files": sorted(str(p) for p in files),
        "sandbox_columns": leaderboard_columns(run, tasks),
    }


COLUMNS = {
    "multi_turn_base": "Base",
    "multi_turn_miss_func": "Miss Func",
    "multi_turn_miss_param": "Miss Param",
    "multi_turn_long_context": "Long Context",
}
"""BFCL's leaderboard columns of the multi-turn categories."""


def leaderboard_columns(run: Path, tasks: dict[str, Any]) -> dict[str, Any] | None:
    """The run's labels (its ``scores.json``, as ``sandbox eval`` wrote them) as BFCL's
    leaderboard's multi-turn columns: each category's accuracy in percent, and ``Multi Turn
    Overall Acc`` their unweighted mean over the four categories (a category the run lacks
    counts 0, as in BFCL's overall); None when the run has no scores."""
    scores = run / "scores.json"
    if not scores.is_file():
        return None
    labels = json.loads(scores.read_text(encoding="utf-8")).get("labels") or []
    solved: dict[str, list[bool]] = {}
    for label in labels:
        task = tasks.get(label.get("task_id"))
        if task is None or task.group not in COLUMNS or label.get("excluded"):
            continue
        solved.setdefault(task.group, []).append(label.get("label") == "solved")
    rates = {c: sum(v) / len(v) for c, v in solved.items() if v}
    out: dict[str, Any] = {
        "Multi Turn Overall Acc": round(100 * sum(rates.values()) / len(COLUMNS), 2)
    }
    for category, column in COLUMNS.items():
        out[column] = round(100 * rates[category], 2) if category in rates else "N/A"
    return out


def _suite(where: str) -> Suite:
    try:
        return load_suite(where)
    except SuiteError as e:
        raise RunError(f"cannot load the run's suite {where}: {e}") from None


def _prefix(suite: Suite, source: str) -> str:
    path = Path(source)
    if not path.is_absolute() and suite.path is not None:
        path = suite.path / path
    try:
        return BfclSource.open(path).prefix
    except BfclSourceError as e:
        raise ConfigError(f"the suite's BFCL copy: {e}") from None


def _order(entry_id: str) -> tuple[str, int]:
    category, _, number = entry_id.rpartition("_")
    return (category, int(number)) if number.isdigit() else (entry_id, -1)
