"""ToolBench / StableToolBench answers -> a suite (tools, tasks, recordings) and one run per method.

``import_answers`` takes answer files and folders of every layout (DFS trees, CoT chains,
converted answers; ``toolbench_answer_files``), mixed, and:

1. reads every episode, with the settings it could have been searched with;
2. settles each one (``toolbench_settings``): the first setting whose re-run of our strategy
   makes exactly the imported nodes; that re-run's outcome (status, chosen path, final answer,
   search statistics) becomes the episode's, ToolBench's own (``finish_type``, raw final answer,
   ``total_steps``, query id...) is kept under ``trajectory.tree["toolbench"]``;
3. makes one task per task id (all methods share it; the reference path is the chosen path of
   the first episode that answered) and the recordings of every observed call, each episode
   keeping its own responses where episodes disagree (``toolbench_recordings``);
4. writes the suite (ToolBench's suffix dispatch, ASCII-escaped observations) and one run folder
   per method (``<run_out>/<method>``, e.g. ``DFS_woFilter_w2``, ``CoT@1``): its ``RunConfig``
   holds the ``toolbench`` preset, the method's settings, the tasks whose tree needed others
   (``task_settings``) and its recordings scope, so ``sandbox replay`` re-runs each tree as it
   was settled.

A file that cannot be read is skipped with its reason; an import that reads no episode at all is
an error that names each file and why. May import ``agents``, ``mock_tools``, ``sandbox.store``
and interop modules.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from agents.outcome import fallback_outcome
from agents.trajectory import Component, Status
from mock_tools.models import Reference, RefStep, SuiteMeta, Task
from mock_tools.suite import fingerprint
from sandbox.errors import SandboxError
from sandbox.interop.suite_writer import write_suite
from sandbox.interop.summary import ImportSummary
from sandbox.interop.toolbench_answer_files import (
    RECORDED_AT,
    AnswerEpisode,
    answer_files,
    read_answer_file,
)
from sandbox.interop.toolbench_queries import ToolCatalog, task_group
from sandbox.interop.toolbench_recordings import EpisodeCalls, merge_recordings
from sandbox.interop.toolbench_settings import settle
from sandbox.store import Manifest, RunStore, SuiteInfo
from sandbox.store.config import TaskSettings

__all__ = ["AnswerEpisode", "import_answers"]

DEFAULT_RUNS = "original-runs"
"""Where the runs go when no ``run_out`` is given: ``<suite>/original-runs/<method>``."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_.@+-]+")


def method_folder(text: str) -> str:
    """A folder name for a method (``CoT@1`` stays ``CoT@1``)."""
    return _UNSAFE.sub("_", text).strip("._") or "toolbench"


def import_answers(
    inputs: list[Path], out: Path, run_out: Path | None = None, name: str | None = None
) -> ImportSummary:
    """Import answer files (or folders of them) into a suite folder and one run per method."""
    summary = ImportSummary(kind="toolbench-answers", out=str(out))
    files = answer_files(inputs)
    if not files:
        raise SandboxError(f"no .json answer files in {', '.join(map(str, inputs))}")
    catalog = ToolCatalog()
    read: list[AnswerEpisode] = []
    for path in files:
        try:
            read.extend(read_answer_file(path, catalog, summary))
        except (ValueError, KeyError, TypeError, ValidationError) as e:
            summary.skip(str(path), f"unreadable answer file: {e}")
    if not read:
        reasons = "; ".join(f"{s.source}: {s.reason}" for s in summary.skipped[:5])
        more = f" (and {len(summary.skipped) - 5} more)" if len(summary.skipped) > 5 else ""
        raise SandboxError(f"no episode imported from {len(files)} file(s): {reasons}{more}")
    runs = _group(read, summary)
    root = run_out or out / DEFAULT_RUNS
    for run_name in runs:
        if (root / run_name / "manifest.json").exists():
            raise SandboxError(f"{root / run_name} already holds a run; choose another --run-out")

    episodes = [ep for group in runs.values() for ep in group]
    asyncio.run(_settle_all(episodes))
    for run_name, group in runs.items():
        for ep in group:
            _take_outcome(ep, summary, run_name)

    schemas = {
        (t, a): spec.parameters for t, apis in catalog.apis.items() for a, spec in apis.items()
    }
    recordings, scoped = merge_recordings(
        [
            EpisodeCalls(f"{run_name}/{ep.task_id}", ep.source, ep.calls)
            for run_name, group in runs.items()
            for ep in group
        ],
        schemas,
        RECORDED_AT,
    )
    tasks = _tasks(episodes)
    meta = SuiteMeta(
        name=name or out.name,
        description="Imported from ToolBench / StableToolBench answers.",
        dispatch="toolbench_suffix",
        ascii_observations=True,
    )
    by_group: dict[str, list[Task]] = {}
    for task in tasks:
        by_group.setdefault(task.group, []).append(task)
    summary.written = write_suite(
        out, meta, catalog.by_category(), by_group, {"toolbench": recordings}
    )
    for run_name, group in runs.items():
        summary.runs[run_name] = str(_write_run(run_name, group, out, root / run_name))
    calls = [c for ep in episodes for c in ep.calls]
    harness = sum(ep.harness_observations for ep in episodes)
    summary.read = {
        "files": len(files),
        "episodes": len(episodes),
        "tree_calls": len(calls) + harness,
        "recorded_calls": len(calls),
        "harness_observations": harness,
        "truncated_observations": sum(c.truncated for c in calls),
        "reproduced": sum(bool(ep.settled and ep.settled.rerun) for ep in episodes),
    }
    summary.written["trajectories"] = len(episodes)
    summary.written["runs"] = len(runs)
    if scoped:
        summary.notes.append(
            f"{scoped} episode(s) saw responses to some identical call that other episodes saw "
            "differently: they keep their own (recordings scoped to the episode)"
        )
    return summary


def _group(episodes: list[AnswerEpisode], summary: ImportSummary) -> dict[str, list[AnswerEpisode]]:
    """Episodes by run: one run per method (and layout, and model when several answered)."""

    def label(ep: AnswerEpisode) -> str:
        return method_folder(ep.method + ("-converted" if ep.layout == "converted" else ""))

    models: dict[str, set[str]] = {}
    for ep in episodes:
        models.setdefault(label(ep), set()).add(ep.model)
    runs: dict[str, list[AnswerEpisode]] = {}
    seen: dict[str, set[str]] = {}
    for ep in episodes:
        run_name = label(ep)
        if len(models[run_name]) > 1:
            run_name = method_folder(f"{ep.model or 'unknown'}-{run_name}")
        if ep.task_id in seen.setdefault(run_name, set()):
            summary.skip(ep.source, f"duplicate: task {ep.task_id} already in run {run_name}")
            continue
        seen[run_name].add(ep.task_id)
        runs.setdefault(run_name, []).append(ep)
    return runs


async def _settle_all(episodes: list[AnswerEpisode]) -> None:
    for ep in episodes:
        ep.settled = await settle(ep.trajectory, ep.candidates, ep.query)


def _take_outcome(ep: AnswerEpisode, summary: ImportSummary, run_name: str) -> None:
    """The episode's outcome as our agent reaches it on the imported tree."""
    traj = ep.trajectory
    settled = ep.settled
    assert settled is not None
    info = traj.tree["toolbench"]
    info["settings"] = {"agent": settled.settings.agent, **settled.settings.options}
    for note in ep.notes:
        summary.notes.append(f"{ep.source}: {note}")
    if settled.rerun is not None:
        got = settled.rerun
        traj.agent = Component(name=got.agent.name, params=got.agent.params)
        traj.status, traj.end_reason = got.status, got.end_reason
        traj.final_answer, traj.chosen_path = got.final_answer, got.chosen_path
        traj.tree = {**got.tree, "source": "toolbench", "toolbench": info}
        if settled.settings is not ep.candidates[0]:
            changed = {
                k: v
                for k, v in settled.settings.options.items()
                if ep.candidates[0].options.get(k) != v
            }
            summary.notes.append(f"{run_name}/{ep.task_id}: reproduced with {changed}")
        return
    summary.notes.append(
        f"{run_name}/{ep.task_id}: no setting reproduces the tree ({settled.difference}); "
        "imported as is, its replay will diverge there"
    )
    answers = [n for n in traj.nodes if n.kind == "finish"]
    if answers and answers[0].finish is not None:
        traj.status, traj.end_reason = Status.answered, "answered"
        traj.final_answer = answers[0].finish.final_answer
        traj.chosen_path = [n.id for n in traj.path_to(answers[0].id)]
    else:
        traj.status, traj.end_reason = Status.gave_up, "tree_exhausted"
        traj.chosen_path, traj.final_answer = fallback_outcome(traj)


def _tasks(episodes: list[AnswerEpisode]) -> list[Task]:
    """One task per task id; the reference comes from the first episode that answered."""
    tasks: dict[str, Task] = {}
    for ep in episodes:
        tags = ["toolbench", "toolbench-answer", ep.method]
        task = tasks.get(ep.task_id)
        if task is None:
            task = tasks[ep.task_id] = Task(
                id=ep.task_id,
                query=ep.query,
                tools=ep.offered,
                group=task_group(ep.task_id),
                tags=tags,
            )
        else:
            task.tags.extend(t for t in tags if t not in task.tags)
        if not task.reference.answer:
            task.reference = _reference(ep) or task.reference
    return list(tasks.values())


def _reference(ep: AnswerEpisode) -> Reference | None:
    """The chosen path and answer of an episode that answered (by ToolBench's record and ours)."""
    traj = ep.trajectory
    if not ep.answered_by_toolbench or traj.status is not Status.answered:
        return None
    steps = [
        RefStep(thought=node.content or "", tool=call.tool, api=call.api, args=call.args)
        for node in traj.chosen()
        for call in node.calls
        if call.tool is not None and call.api is not None and call.args is not None
    ]
    return Reference(steps=steps, answer=traj.final_answer or ep.reference_answer or "")


def _write_run(run_name: str, group: list[AnswerEpisode], suite_dir: Path, run_dir: Path) -> Path:
    """One method's episodes as a run folder whose config re-runs each tree as it was settled."""
    settings = [ep.settled.settings for ep in group if ep.settled is not None]
    common_key, _ = Counter(s.key() for s in settings).most_common(1)[0]
    common = next(s for s in settings if s.key() == common_key)
    per_task: dict[str, TaskSettings] = {}
    for ep in group:
        assert ep.settled is not None
        own = ep.settled.settings
        if own.key() == common_key:
            continue
        values: dict[str, Any] = {"agent_options": own.options}
        if own.max_depth != common.max_depth:
            values["max_depth"] = own.max_depth
        if own.max_model_calls != common.max_model_calls:
            values["max_model_calls"] = own.max_model_calls
        per_task[ep.task_id] = TaskSettings(**values)
    first = group[0].trajectory
    config = common.config(
        suite=str(suite_dir),
        model=first.model.name,
        tasks=[ep.task_id for ep in group],
        recording_scope=run_name,
        task_settings=per_task,
    )
    strategy = config.strategy()
    manifest = Manifest(
        run_id=run_dir.name,
        config=config,
        suite=SuiteInfo(
            name=suite_dir.name, path=str(suite_dir), fingerprint=fingerprint(suite_dir)
        ),
        agent={"name": strategy.name, "params": strategy.params},
        model=first.model.model_dump(),
        episodes=[(ep.task_id, 0) for ep in group],
        status="completed",
        started_at=RECORDED_AT,
        ended_at=RECORDED_AT,
    )
    with RunStore.create(run_dir.parent, manifest) as store:
        for ep in group:
            ep.trajectory.run_id = run_dir.name
            store.append(ep.trajectory)
    return run_dir
