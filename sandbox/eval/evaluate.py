"""``evaluate_run``: every score of a stored run, recomputed from its trajectories alone.

Reads ``runs/<id>/manifest.json`` and ``trajectories.jsonl``, labels every episode (rules, checks,
then the judge when one is given), summarises the pass rate with intervals overall and per group,
pass@k / pass^k when the run has several trials, the step-level scores with an interval on each
dimension, and, against a reference run, the win rate and the paired McNemar test. ``RunScores``
is what ``scores.json`` holds; ``sandbox.eval.report`` writes it and the human-readable views.
May import ``sandbox.store``, ``models`` (the judge's cache) and ``eval`` modules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agents.trajectory import Trajectory
from mock_tools.errors import SuiteError
from mock_tools.models import Task
from mock_tools.suite import Suite, load_suite
from sandbox.errors import RunError
from sandbox.eval.judge import Judge, JudgeUsage
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary, label_episode, label_run, needs_judge
from sandbox.eval.pass_rate import summarise as summarise_pass
from sandbox.eval.reason_score import LexicalSimilarity, ThoughtSimilarity
from sandbox.eval.stats import (
    Interval,
    PairedTest,
    bootstrap_ci,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
)
from sandbox.eval.usage import UsageTotals
from sandbox.eval.win_rate import (
    PairOutcome,
    WinSummary,
    compare_runs,
    judged,
    pair_keys,
    summarise_wins,
)
from sandbox.store import Manifest, RunStore, read_trajectories

SCORES_SCHEMA = "agent-sandbox/scores@1"


class StepReport(BaseModel):
    """The step-level summary (``sandbox.eval.step_scores``) and an interval per dimension."""

    summary: dict[str, Any]
    intervals: dict[str, Interval]
    reason_similarity: str = Field(
        default="lexical", description="How thoughts were compared for the reason score."
    )


class ReferenceComparison(BaseModel):
    reference_run: str
    win: WinSummary
    paired: PairedTest = Field(description="McNemar on solved/not per paired episode.")


class RunScores(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=SCORES_SCHEMA, alias="schema")
    run_id: str
    suite: dict[str, str]
    agent: str
    model: str
    tasks: int
    episodes: int = Field(description="Episodes expected (tasks x trials).")
    trials: int
    pass_rate: PassSummary
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    usage: UsageTotals
    step_scores: StepReport | None = None
    reference: ReferenceComparison | None = None
    judge: JudgeUsage | None = None
    labels: list[EpisodeLabel]
    notes: list[str] = Field(default_factory=list)


class LoadedRun(BaseModel):
    path: str
    manifest: Manifest
    trajectories: list[Trajectory]


def load_run(run_dir: str | Path) -> LoadedRun:
    """The manifest and trajectories of a run folder; RunError when missing or corrupt."""
    path = Path(run_dir)
    if not path.is_dir():
        raise RunError(f"no run folder at {path} (pass the folder runs/<run-id>)")
    store = RunStore.open(path)
    return LoadedRun(path=str(path), manifest=store.manifest, trajectories=read_trajectories(path))


def suite_for(run: LoadedRun, suite: Suite | str | Path | None) -> tuple[Suite, list[str]]:
    """The suite to score against: given, else the one recorded in the manifest."""
    notes: list[str] = []
    if isinstance(suite, Suite):
        loaded = suite
    else:
        where = Path(suite or run.manifest.suite.path or run.manifest.config.suite)
        try:
            loaded = load_suite(where)
        except SuiteError as e:
            raise RunError(
                f"cannot load the suite of run {run.manifest.run_id} ({where}): {e}; "
                "pass the suite folder explicitly (--suite)"
            ) from e
    recorded = run.manifest.suite.fingerprint
    if recorded and loaded.fingerprint and recorded != loaded.fingerprint:
        notes.append(
            f"suite fingerprint differs from the run's ({loaded.fingerprint[:12]} vs "
            f"{recorded[:12]}): the suite changed since the run"
        )
    return loaded, notes


def run_tasks(run: LoadedRun, suite: Suite) -> tuple[list[Task], list[tuple[str, int]]]:
    """The tasks the run selected (all of the suite when the manifest does not say)."""
    keys = [(str(k[0]), int(k[1])) for k in run.manifest.episodes]
    if not keys:
        trials = max(1, run.manifest.config.trials)
        keys = [(t.id, i) for t in suite.tasks for i in range(trials)]
    wanted = {k[0] for k in keys}
    tasks = [t for t in suite.tasks if t.id in wanted]
    known = {t.id for t in tasks}
    return tasks, [k for k in keys if k[0] in known]


def labels_for(
    trajs: Sequence[Trajectory], tasks: Sequence[Task], keys: Sequence[tuple[str, int]]
) -> list[EpisodeLabel]:
    """Rule/check labels of every expected episode; a missing one is an unsolved label."""
    by_id = {t.id: t for t in tasks}
    order = {t.id: i for i, t in enumerate(tasks)}
    labels = {
        (lb.task_id, lb.trial): lb for lb in label_run(trajs, tasks) if lb.status != "missing"
    }
    out: list[EpisodeLabel] = []
    for key in sorted(set(keys) | set(labels), key=lambda k: (order[k[0]], k[1])):
        lb = labels.get(key)
        if lb is None:
            lb = label_episode(None, by_id[key[0]]).model_copy(update={"trial": key[1]})
        out.append(lb)
    return out


async def judge_labels(
    judge: Judge, labels: list[EpisodeLabel], trajs: Sequence[Trajectory], tasks: Sequence[Task]
) -> list[EpisodeLabel]:
    """The judge's labels for what rules and checks left undecided; others unchanged."""
    by_key = {(t.scenario_id, t.trial): t for t in trajs}
    by_id = {t.id: t for t in tasks}

    async def one(lb: EpisodeLabel) -> EpisodeLabel:
        traj = by_key.get((lb.task_id, lb.trial))
        if traj is None or not needs_judge(lb):
            return lb
        return await judge.label(traj, by_id[lb.task_id], lb)

    return list(await asyncio.gather(*(one(lb) for lb in labels)))


def trial_rates(labels: Sequence[EpisodeLabel]) -> tuple[dict[str, float], dict[str, float]]:
    """pass@k and pass^k for k = 1..(fewest trials of any task), when there are several."""
    counts: dict[str, list[int]] = {}
    for lb in labels:
        n_c = counts.setdefault(lb.task_id, [0, 0])
        n_c[0] += 1
        n_c[1] += lb.label == "solved"
    if not counts:
        return {}, {}
    k_max = min(n for n, _ in counts.values())
    if k_max < 2:
        return {}, {}
    pairs = [(n, c) for n, c in counts.values()]
    at = {str(k): mean_pass_at_k(pairs, k) for k in range(1, k_max + 1)}
    hat = {str(k): mean_pass_hat_k(pairs, k) for k in range(1, k_max + 1)}
    return at, hat


def step_report(
    trajs: Sequence[Trajectory],
    tasks: Sequence[Task],
    suite: Suite,
    seed: int,
    similarity: ThoughtSimilarity | None = None,
) -> StepReport | None:
    """Step-level scores from ``sandbox.eval.step_scores`` (None if that module is absent)."""
    try:
        from sandbox.eval import step_scores
    except ImportError:  # pragma: no cover - the module ships with the package
        return None
    by_id = {t.id: t for t in tasks}
    kept = [t for t in trajs if t.scenario_id in by_id]
    episodes = step_scores.score_episodes(kept, by_id, suite.apis, similarity=similarity)
    summary = step_scores.summarise(episodes)
    intervals = {
        d: bootstrap_ci(step_scores.dimension_values(episodes, d), seed=seed)
        for d in step_scores.DIMENSIONS
    }
    return StepReport(
        summary=summary.model_dump(mode="json"),
        intervals=intervals,
        reason_similarity=(similarity or LexicalSimilarity()).name,
    )


async def compare_with_reference(
    cand: LoadedRun,
    cand_labels: list[EpisodeLabel],
    ref: LoadedRun,
    ref_labels: list[EpisodeLabel],
    tasks: Sequence[Task],
    judge: Judge | None,
    seed: int,
) -> ReferenceComparison:
    outcomes = compare_runs(cand.trajectories, cand_labels, ref.trajectories, ref_labels, tasks)
    if judge is not None:
        outcomes = await _judge_ties(judge, outcomes, cand, ref, tasks)
    win = summarise_wins(
        outcomes, candidate=cand.manifest.run_id, reference=ref.manifest.run_id, seed=seed
    )
    cl = {(lb.task_id, lb.trial): lb.label == "solved" for lb in cand_labels}
    rl = {(lb.task_id, lb.trial): lb.label == "solved" for lb in ref_labels}
    keys = pair_keys(cl, rl, tasks)
    paired = mcnemar_exact([cl.get(k, False) for k in keys], [rl.get(k, False) for k in keys])
    return ReferenceComparison(reference_run=ref.manifest.run_id, win=win, paired=paired)


async def _judge_ties(
    judge: Judge,
    outcomes: list[PairOutcome],
    cand: LoadedRun,
    ref: LoadedRun,
    tasks: Sequence[Task],
) -> list[PairOutcome]:
    query = {t.id: t.query for t in tasks}
    ca = {(t.scenario_id, t.trial): (t.final_answer or "") for t in cand.trajectories}
    ra = {(t.scenario_id, t.trial): (t.final_answer or "") for t in ref.trajectories}

    async def one(o: PairOutcome) -> PairOutcome:
        if not o.undecided:
            return o
        key = (o.task_id, o.trial)
        pref = await judge.select_better_answer(query[o.task_id], ca.get(key, ""), ra.get(key, ""))
        return judged(o, pref)

    return list(await asyncio.gather(*(one(o) for o in outcomes)))


async def evaluate_run_async(
    run_dir: str | Path,
    suite: Suite | str | Path | None = None,
    *,
    judge: Judge | None = None,
    reference_run: str | Path | None = None,
    seed: int | None = None,
    similarity: ThoughtSimilarity | None = None,
) -> RunScores:
    run = load_run(run_dir)
    loaded, notes = suite_for(run, suite)
    tasks, keys = run_tasks(run, loaded)
    if not tasks:
        raise RunError(f"run {run.manifest.run_id}: none of its tasks is in suite {loaded.name}")
    seed = run.manifest.seed if seed is None else seed
    ids = {t.id for t in tasks}
    stray = sum(1 for t in run.trajectories if t.scenario_id not in ids)
    if stray:
        notes.append(f"{stray} trajectories of tasks outside the run's selection were ignored")
    # In the run's episode order, not the order they finished in: scores (bootstrap intervals
    # included) must not depend on which episode an executor happened to finish first.
    position = {t.id: i for i, t in enumerate(tasks)}
    trajs = sorted(
        (t for t in run.trajectories if t.scenario_id in ids),
        key=lambda t: (position[t.scenario_id], t.trial),
    )

    labels = labels_for(trajs, tasks, keys)
    if judge is not None:
        labels = await judge_labels(judge, labels, trajs, tasks)
    at_k, hat_k = trial_rates(labels)
    reference = None
    if reference_run is not None:
        ref = load_run(reference_run)
        ref_trajs = [t for t in ref.trajectories if t.scenario_id in ids]
        ref = ref.model_copy(update={"trajectories": ref_trajs})
        ref_labels = labels_for(ref_trajs, tasks, keys)
        if judge is not None:
            ref_labels = await judge_labels(judge, ref_labels, ref_trajs, tasks)
        cand = run.model_copy(update={"trajectories": trajs})
        reference = await compare_with_reference(cand, labels, ref, ref_labels, tasks, judge, seed)
    manifest = run.manifest
    return RunScores(
        run_id=manifest.run_id,
        suite={
            "name": loaded.name,
            "version": loaded.meta.version,
            "fingerprint": manifest.suite.fingerprint or loaded.fingerprint,
        },
        agent=str(manifest.agent.get("name") or manifest.config.agent),
        model=str(manifest.model.get("name") or manifest.config.model),
        tasks=len(tasks),
        episodes=len(labels),
        trials=max(1, manifest.config.trials),
        pass_rate=summarise_pass(labels, tasks, seed=seed),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        usage=UsageTotals.of(trajs),
        step_scores=step_report(trajs, tasks, loaded, seed, similarity),
        reference=reference,
        judge=judge.usage.model_copy() if judge is not None else None,
        labels=labels,
        notes=notes,
    )


def evaluate_run(
    run_dir: str | Path,
    suite: Suite | str | Path | None = None,
    *,
    judge: Judge | None = None,
    reference_run: str | Path | None = None,
    seed: int | None = None,
    similarity: ThoughtSimilarity | None = None,
) -> RunScores:
    """Synchronous ``evaluate_run_async`` (for the CLI and scripts)."""
    return asyncio.run(
        evaluate_run_async(
            run_dir,
            suite,
            judge=judge,
            reference_run=reference_run,
            seed=seed,
            similarity=similarity,
        )
    )
