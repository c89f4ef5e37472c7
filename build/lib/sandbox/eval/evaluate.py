"""``evaluate_run``: every score of a stored run, recomputed from its trajectories alone.

Reads ``runs/<id>/manifest.json`` and ``trajectories.jsonl``, labels every episode with the
chosen protocol (``sandbox.eval.protocols``: ``default`` = rules, checks, then the judge when one
is given; ``toolbench`` = ToolEval's), summarises the pass rate with intervals overall and per
group, pass@k / pass^k when the run has several trials, the step-level scores with an interval on
each dimension, and, against a reference run, the protocol's win rate and the paired McNemar
test. Every interval resamples tasks. ``RunScores`` is what ``scores.json`` holds;
``sandbox.eval.report`` writes it and the human-readable views.
May import ``sandbox.store``, ``models`` (the judge's cache) and ``eval`` modules.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Sequence
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from agents.trajectory import Trajectory
from mock_tools.errors import SuiteError
from mock_tools.models import Task
from mock_tools.suite import Suite, load_suite
from sandbox.errors import RunError
from sandbox.eval.judge import Judge, JudgeUsage
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary
from sandbox.eval.protocol import EvalProtocol, JudgeSettings
from sandbox.eval.protocols import DEFAULT_PROTOCOL, get_protocol
from sandbox.eval.reason_score import ThoughtSimilarity, similarity_label, thought_similarity
from sandbox.eval.stats import (
    Interval,
    PairedTest,
    bootstrap_ci,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
)
from sandbox.eval.usage import UsageTotals
from sandbox.eval.win_rate import RunSide, WinSummary, pair_keys
from sandbox.store import EpisodeKey, Manifest, RunStore, read_trajectories
from sandbox.store.gc_pause import paused_gc

SCORES_SCHEMA = "agent-sandbox/scores@1"


T = TypeVar("T")


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


class InfraSummary(BaseModel):
    """Infrastructure trouble of a run: never the agents' mistakes, always reported."""

    retries: int = Field(
        default=0, description="Model calls the clients retried (the agents' and the simulator's)."
    )
    errors: int = Field(default=0, description="Episodes that ended on an infrastructure error.")
    episodes: list[str] = Field(
        default_factory=list, description="Those episodes, as task#trial (run them again)."
    )


class RunScores(BaseModel):
    model_config = ConfigDict(populate_by_name=True)

    schema_: str = Field(default=SCORES_SCHEMA, alias="schema")
    run_id: str
    protocol: str = Field(default=DEFAULT_PROTOCOL, description="The evaluation protocol.")
    judge_settings: JudgeSettings | None = Field(
        default=None, description="Samples, rounds, temperature and order the judge used."
    )
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
    price_source: str = Field(default="", description="Where the model's price came from.")
    simulator: dict[str, Any] | None = Field(
        default=None, description="What the tool simulator used (calls, tokens, cost), if any."
    )
    infra: InfraSummary = Field(default_factory=InfraSummary)
    step_scores: StepReport | None = None
    reference: ReferenceComparison | None = None
    _answers: dict[EpisodeKey, str | None] | None = PrivateAttr(default=None)
    """The final answer of every scored episode, when the evaluation that made these scores
    kept them (``report.md`` shows them; without them they are read from the run folder)."""

    def answers(self) -> dict[EpisodeKey, str | None] | None:
        """The final answers the evaluation kept (see ``_answers``), if it kept them."""
        return self._answers

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
    # the documented default (``--reason-similarity auto``) wherever a run is scored, so a run's
    # own scores and those of ``sandbox eval`` say the same
    similarity = similarity or thought_similarity("auto")
    episodes = step_scores.score_episodes(kept, by_id, suite.apis, similarity=similarity)
    summary = step_scores.summarise(episodes)
    intervals = {}
    for d in step_scores.DIMENSIONS:
        points = step_scores.dimension_points(episodes, d)
        intervals[d] = bootstrap_ci(
            [v for _, v in points], seed=seed, clusters=[t for t, _ in points]
        )
    return StepReport(
        summary=summary.model_dump(mode="json"),
        intervals=intervals,
        reason_similarity=similarity_label(similarity),
    )


async def compare_with_reference(
    protocol: EvalProtocol,
    candidate: RunSide,
    reference: RunSide,
    tasks: Sequence[Task],
    judge: Judge | None,
    settings: JudgeSettings,
    *,
    seed: int,
    reference_run: str,
) -> ReferenceComparison:
    """The protocol's win rate of ``candidate`` over ``reference`` and the paired McNemar test
    (on solved or not, over the episodes both sides have a counted label for)."""
    outcomes = await protocol.prefer(candidate, reference, tasks, judge, settings, seed=seed)
    win = protocol.summarise_wins(
        outcomes, candidate=candidate.name, reference=reference.name, seed=seed
    )
    return ReferenceComparison(
        reference_run=reference_run,
        win=win,
        paired=paired_test(candidate.labels, reference.labels, tasks),
    )


def paired_test(
    a: Sequence[EpisodeLabel], b: Sequence[EpisodeLabel], tasks: Sequence[Task]
) -> PairedTest:
    """Exact McNemar on solved / not solved per episode; an episode excluded on either side
    (judge error, or dropped by the protocol) takes no part."""
    left = {(lb.task_id, lb.trial): lb for lb in a}
    right = {(lb.task_id, lb.trial): lb for lb in b}
    keys = [
        k
        for k in pair_keys(left, right, tasks)
        if not (k in left and left[k].excluded) and not (k in right and right[k].excluded)
    ]

    def solved(side: dict[tuple[str, int], EpisodeLabel], k: tuple[str, int]) -> bool:
        return k in side and side[k].label == "solved"

    return mcnemar_exact([solved(left, k) for k in keys], [solved(right, k) for k in keys])


async def evaluate_run_async(
    run_dir: str | Path,
    suite: Suite | str | Path | None = None,
    *,
    protocol: EvalProtocol | str = DEFAULT_PROTOCOL,
    judge: Judge | None = None,
    settings: JudgeSettings | None = None,
    reference_run: str | Path | None = None,
    seed: int | None = None,
    similarity: ThoughtSimilarity | None = None,
) -> RunScores:
    """Every score of the run at ``run_dir`` under ``protocol`` (see the module doc).

    ``settings`` (samples, rounds, temperature, order) default to the protocol's; the judge's
    temperature is the ``Judge``'s own. A protocol that needs a judge raises ``ConfigError``
    without one. Reading and scoring is a bulk job: the cyclic collector is paused for it unless
    a judge is called (``sandbox.store.gc_pause``)."""
    with paused_gc(when=judge is None):
        return await _evaluate_run(
            run_dir, suite, protocol, judge, settings, reference_run, seed, similarity
        )


async def _evaluate_run(
    run_dir: str | Path,
    suite: Suite | str | Path | None,
    protocol: EvalProtocol | str,
    judge: Judge | None,
    settings: JudgeSettings | None,
    reference_run: str | Path | None,
    seed: int | None,
    similarity: ThoughtSimilarity | None,
) -> RunScores:
    proto = get_protocol(protocol) if isinstance(protocol, str) else protocol
    settings = settings or JudgeSettings()
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

    labels = await proto.label(trajs, tasks, keys, judge, settings)
    at_k, hat_k = trial_rates([lb for lb in labels if lb.excluded is None])
    reference = None
    if reference_run is not None:
        ref = load_run(reference_run)
        if ref.manifest.suite.fingerprint != run.manifest.suite.fingerprint:
            notes.append(
                f"the reference run {ref.manifest.run_id} used another suite version: tool "
                "behaviour was not identical for the two runs"
            )
        ref_trajs = [t for t in ref.trajectories if t.scenario_id in ids]
        ref_labels = await proto.label(ref_trajs, tasks, keys, judge, settings)
        reference = await compare_with_reference(
            proto,
            RunSide(name=run.manifest.run_id, trajectories=trajs, labels=labels),
            RunSide(name=ref.manifest.run_id, trajectories=ref_trajs, labels=ref_labels),
            tasks,
            judge,
            settings,
            seed=seed,
            reference_run=ref.manifest.run_id,
        )
    manifest = run.manifest
    scores = RunScores(
        run_id=manifest.run_id,
        protocol=proto.name,
        judge_settings=effective_settings(proto, settings, judge) if judge is not None else None,
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
        pass_rate=proto.summarise(labels, tasks, seed=seed),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        usage=(usage := UsageTotals.of(trajs)),
        price_source=str(manifest.model.get("price_source") or ""),
        simulator=manifest.tools.get("simulator"),
        infra=InfraSummary(
            retries=usage.model_retries
            + int((manifest.tools.get("simulator") or {}).get("retries", 0)),
            errors=sum(lb.infra_error for lb in labels),
            episodes=[f"{lb.task_id}#{lb.trial}" for lb in labels if lb.infra_error],
        ),
        step_scores=step_report(trajs, tasks, loaded, seed, similarity),
        reference=reference,
        judge=judge.usage.model_copy() if judge is not None else None,
        labels=labels,
        notes=notes,
    )
    scores._answers = {(t.scenario_id, t.trial): t.final_answer for t in trajs}
    return scores


def run_blocking(job: Coroutine[Any, Any, T]) -> T:
    """``asyncio.run(job)``, without handing the result back through the task that runs it.

    When ``asyncio.run`` puts Ctrl-C's handler back, Python's ``signal`` module builds the repr
    of the old handler, which holds that task and so its result: for the scores of a run of
    10,000 episodes that repr took 0.7 s."""
    kept: list[T] = []

    async def keep() -> None:
        kept.append(await job)

    asyncio.run(keep())
    return kept[0]


def effective_settings(
    protocol: EvalProtocol, settings: JudgeSettings, judge: Judge
) -> JudgeSettings:
    """What the judge was actually asked with: the given settings over the protocol's."""
    d = protocol.defaults
    return JudgeSettings(
        samples=settings.samples or d.samples,
        rounds=settings.rounds or d.rounds,
        temperature=judge.temperature,
        order=settings.order,
    )


def evaluate_run(
    run_dir: str | Path,
    suite: Suite | str | Path | None = None,
    *,
    protocol: EvalProtocol | str = DEFAULT_PROTOCOL,
    judge: Judge | None = None,
    settings: JudgeSettings | None = None,
    reference_run: str | Path | None = None,
    seed: int | None = None,
    similarity: ThoughtSimilarity | None = None,
) -> RunScores:
    """Synchronous ``evaluate_run_async`` (for the CLI and scripts)."""
    return run_blocking(
        evaluate_run_async(
            run_dir,
            suite,
            protocol=protocol,
            judge=judge,
            settings=settings,
            reference_run=reference_run,
            seed=seed,
            similarity=similarity,
        )
    )
