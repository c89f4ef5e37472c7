"""``evaluate_run``: every score of a stored run, recomputed from its trajectories alone.

Reads ``runs/<id>/manifest.json`` and ``trajectories.jsonl`` (or ``.jsonl.zst``) one trajectory
at a time (``_stream``: constant memory but for the labels), labels every episode with the
chosen protocol (``sandbox.eval.protocols``: ``default`` = rules, checks, then the judge when one
is given; ``toolbench`` = ToolEval's), summarises the pass rate with intervals overall and per
group, pass@k / pass^k when the run has several trials, in a world each state check over the
episodes (``state_checks``), the step-level scores with an interval on
each dimension, and, against a reference run, the protocol's win rate and the paired McNemar
test. Every interval resamples tasks. ``RunScores`` is what ``scores.json`` holds;
``sandbox.eval.report`` writes it and the human-readable views.
May import ``sandbox.store``, ``models`` (the judge's cache) and ``eval`` modules.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
)

from agents.trajectory import Trajectory
from mock_tools.errors import SuiteError
from mock_tools.models import Task
from mock_tools.suite import Suite, load_suite
from sandbox.errors import ConfigError, RunError
from sandbox.eval.blocking import run_blocking
from sandbox.eval.checked_protocol import checked
from sandbox.eval.judge import Judge, JudgeUsage
from sandbox.eval.nl_judge import NLJudging, NLSummary
from sandbox.eval.omit_empty import OmitEmpty
from sandbox.eval.paired import paired_test
from sandbox.eval.pass_rate import EpisodeLabel, PassSummary, scoring_rule_text
from sandbox.eval.protocol import PROTOCOLS, EvalProtocol, JudgeSettings
from sandbox.eval.protocols import DEFAULT_PROTOCOL, get_protocol
from sandbox.eval.state_checks import StateChecks, state_checks
from sandbox.eval.stats import (
    PairedTest,
    mean_pass_at_k,
    mean_pass_hat_k,
    trial_ks,
)
from sandbox.eval.step_report import StepReport, StepScorer
from sandbox.eval.steps.metric import DEFAULT_STEP_PROTOCOL
from sandbox.eval.steps.reason_score import ThoughtSimilarity
from sandbox.eval.steps.selection import ChosenProtocol, StepSelection
from sandbox.eval.usage import USAGE_TYPES, UsageTotals, counts
from sandbox.eval.win_rate import RunSide, WinSummary
from sandbox.eval.world_verdict import world_verdict
from sandbox.store import EpisodeKey, Manifest, RunStore, read_trajectories
from sandbox.store.gc_pause import paused_gc
from sandbox.store.run_store import iter_latest
from sandbox.store.trajectory_file import trajectories_file

SCORES_SCHEMA = "agent-sandbox/scores@1"


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


class RunScores(OmitEmpty):
    model_config = ConfigDict(populate_by_name=True)
    omit_when_empty = ("step_protocols", "state_checks", "nl_assertions")

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
    state_checks: StateChecks | None = Field(
        default=None,
        description="In a world: each state check over the episodes, with pass@k / pass^k "
        "(``sandbox.eval.state_checks``; left out of the JSON elsewhere).",
    )
    usage: UsageTotals
    price_source: str = Field(default="", description="Where the model's price came from.")
    simulator: dict[str, Any] | None = Field(
        default=None, description="What the tool simulator used (calls, tokens, cost), if any."
    )
    infra: InfraSummary = Field(default_factory=InfraSummary)
    step_scores: StepReport | None = Field(
        default=None, description="Step-level scores under the default step protocol."
    )
    step_protocols: dict[str, StepReport] = Field(
        default_factory=dict,
        description="Step-level scores under any other step protocol, by its name (left out of "
        "the JSON when none).",
    )
    reference: ReferenceComparison | None = None
    nl_assertions: NLSummary | None = Field(
        default=None,
        description="Natural-language assertions (``sandbox.eval.nl_judge``): judged, met, "
        "unjudged, skipped, and every verdict (left out of the JSON when no task has any).",
    )
    _scoring_rule: str | None = PrivateAttr(default=None)
    _answers: dict[EpisodeKey, str | None] | None = PrivateAttr(default=None)
    """The final answer of every scored episode, when the evaluation that made these scores
    kept them (``report.md`` shows them; without them they are read from the run folder)."""

    def answers(self) -> dict[EpisodeKey, str | None] | None:
        """The final answers the evaluation kept (see ``_answers``), if it kept them."""
        return self._answers

    def scoring_rule(self) -> str:
        """What each label scored (the protocol's ``scoring_rule``): as the evaluation that made
        these scores kept it, else as the protocol registered under their name says, else the
        built-in protocols' rule."""
        if self._scoring_rule is not None:
            return self._scoring_rule
        protocol = PROTOCOLS.find(self.protocol)
        return protocol.scoring_rule if protocol is not None else scoring_rule_text()

    def step_protocol_reports(self) -> dict[str, StepReport]:
        """Every step protocol's report, by name: ``default`` first (``step_scores``)."""
        first = {DEFAULT_STEP_PROTOCOL: self.step_scores} if self.step_scores is not None else {}
        return first | self.step_protocols

    judge: JudgeUsage | None = None
    labels: list[EpisodeLabel]
    notes: list[str] = Field(default_factory=list)


class LoadedRun(BaseModel):
    """A run folder's manifest; its trajectories are read from ``path`` when needed."""

    path: str
    manifest: Manifest

    def latest(self) -> Iterator[Trajectory]:
        """The latest trajectory of each episode, in file order, one at a time."""
        listed = set(self.manifest.episode_keys())
        return iter_latest(trajectories_file(Path(self.path)), listed=listed)


def load_run(run_dir: str | Path) -> LoadedRun:
    """The manifest of a run folder; RunError when missing or corrupt."""
    path = Path(run_dir)
    if not path.is_dir():
        raise RunError(f"no run folder at {path} (pass the folder runs/<run-id>)")
    store = RunStore.open(path)
    return LoadedRun(path=str(path), manifest=store.manifest)


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
    keys = run.manifest.episode_keys()
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
    pairs = [(n, c) for n, c in counts.values()]
    ks = trial_ks(pairs)
    at = {str(k): mean_pass_at_k(pairs, k) for k in ks}
    hat = {str(k): mean_pass_hat_k(pairs, k) for k in ks}
    return at, hat


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
    (``sandbox.eval.paired``: the episodes both runs labelled, none left out)."""
    outcomes = await protocol.prefer(candidate, reference, tasks, judge, settings, seed=seed)
    win = protocol.summarise_wins(
        outcomes, candidate=candidate.name, reference=reference.name, seed=seed
    )
    return ReferenceComparison(
        reference_run=reference_run,
        win=win,
        paired=paired_test(candidate.labels, reference.labels),
    )


@dataclass(frozen=True)
class _Request:
    """What an evaluation was asked for (``evaluate_run_async``'s options)."""

    protocol: EvalProtocol
    judge: Judge | None
    settings: JudgeSettings
    reference_run: str | Path | None
    seed: int | None
    similarity: ThoughtSimilarity | None
    steps: list[ChosenProtocol]


@dataclass
class _Scored:
    """One run being scored: its record (no trajectory: they are streamed, ``_stream``), suite,
    selected tasks and episodes, and notes."""

    run: LoadedRun
    suite: Suite
    tasks: list[Task]
    keys: list[tuple[str, int]]
    notes: list[str]
    seed: int
    stray_note_at: int = 0
    """Where the note on trajectories of other tasks goes among ``notes`` (known only once
    they are read): after the suite's, before the reference's."""

    def trajectories(self) -> list[Trajectory]:
        """The run's trajectories of the selected tasks, in the run's episode order (held all
        at once: for a protocol that labels a run as a whole, and a reference comparison)."""
        position = {t.id: i for i, t in enumerate(self.tasks)}
        return sorted(
            (t for t in read_trajectories(self.run.path) if t.scenario_id in position),
            key=lambda t: (position[t.scenario_id], t.trial),
        )


@dataclass
class _Streamed:
    """What one pass over a run's trajectories keeps of them: labels, step scores (a table),
    each episode's usage and final answer, in the run's episode order; nothing else."""

    labels: list[EpisodeLabel]
    steps: dict[str, StepReport]
    usage: UsageTotals
    answers: dict[EpisodeKey, str | None]
    nl: NLSummary | None = None


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
    steps: StepSelection | None = None,
) -> RunScores:
    """Every score of the run at ``run_dir`` under ``protocol`` (see the module doc).

    ``settings`` (samples, rounds, temperature, order) default to the protocol's; the judge's
    temperature is the ``Judge``'s own. A protocol that needs a judge raises ``ConfigError``
    without one. ``steps`` chooses the step protocols and added step metrics (default: the
    ``default`` step protocol). Reading and scoring is a bulk job: the cyclic collector is paused
    for it unless a judge is called (``sandbox.store.gc_pause``)."""
    request = _Request(
        protocol=get_protocol(protocol) if isinstance(protocol, str) else checked(protocol),
        judge=judge,
        settings=settings or JudgeSettings(),
        reference_run=reference_run,
        seed=seed,
        similarity=similarity,
        steps=(steps or StepSelection()).resolve(),
    )
    with paused_gc(when=judge is None):
        return await _evaluate_run(run_dir, suite, request)


def _scored_run(run_dir: str | Path, suite: Suite | str | Path | None, seed: int | None) -> _Scored:
    run = load_run(run_dir)
    loaded, notes = suite_for(run, suite)
    tasks, keys = run_tasks(run, loaded)
    if not tasks:
        raise RunError(f"run {run.manifest.run_id}: none of its tasks is in suite {loaded.name}")
    seed = run.manifest.seed if seed is None else seed
    return _Scored(run, loaded, tasks, keys, notes, seed, stray_note_at=len(notes))


LABEL_CHUNK = 100
"""Episodes a protocol that labels each episode alone is given at once (``_stream``)."""


class _Labeller:
    """Labels the trajectories of a run as they stream by: in chunks of ``LABEL_CHUNK`` when the
    protocol says an episode's label depends on that episode alone (``labels_each_episode``),
    else all at once at the end (the run's trajectories read again and held)."""

    def __init__(self, request: _Request, scored: _Scored) -> None:
        self.request, self.scored = request, scored
        self.each = bool(getattr(request.protocol, "labels_each_episode", False))
        self.labels: list[EpisodeLabel] = []
        self._chunk: list[Trajectory] = []
        self.nl = NLJudging(request.judge, Path(scored.run.path), scored.tasks)

    async def _label(self, trajs: list[Trajectory], keys: list[EpisodeKey]) -> None:
        r = self.request
        await self.nl.judge_all(trajs)  # NL assertions first: their verdicts are checks
        self.labels += await r.protocol.label(trajs, self.scored.tasks, keys, r.judge, r.settings)

    async def add(self, traj: Trajectory) -> None:
        if not self.each:
            return
        self._chunk.append(traj)
        if len(self._chunk) >= LABEL_CHUNK:
            chunk, self._chunk = self._chunk, []
            await self._label(chunk, _keys(chunk))

    async def done(self, rows: _EpisodeRows) -> list[EpisodeLabel]:
        """Every label, in the run's episode order (an expected episode without a trajectory
        among ``rows`` labelled as the protocol labels a missing one)."""
        scored = self.scored
        if not self.each:
            await self._label(scored.trajectories(), scored.keys)
            return self.labels
        await self._label(self._chunk, _keys(self._chunk))
        seen, position = rows.seen(), rows.position
        missing = [k for k in scored.keys if (position[k[0]], k[1]) not in seen]
        await self._label([], missing)
        return sorted(self.labels, key=lambda lb: (position[lb.task_id], lb.trial))


class _EpisodeRows:
    """What the scores keep of each streamed episode besides its label and step scores: where it
    goes in the run's episode order, its usage, its steps and its final answer (columns)."""

    def __init__(self, tasks: Sequence[Task]) -> None:
        self.tasks = tasks
        self.position = {t.id: i for i, t in enumerate(tasks)}
        self._where = array("q")  # task position, trial: two numbers a row
        self._steps = array("q")
        self._usage: list[array[Any]] = [array("d" if t is float else "q") for t in USAGE_TYPES]
        self._answers: list[str | None] = []

    def __len__(self) -> int:
        return len(self._steps)

    def add(self, traj: Trajectory) -> None:
        self._where.extend((self.position[traj.scenario_id], traj.trial))
        self._steps.append(len(traj.nodes))
        for column, value in zip(self._usage, counts(traj.usage), strict=True):
            column.append(value)
        self._answers.append(traj.final_answer)

    def _place(self, i: int) -> tuple[int, int]:
        return self._where[2 * i], self._where[2 * i + 1]

    def seen(self) -> set[tuple[int, int]]:
        return {self._place(i) for i in range(len(self))}

    def order(self) -> list[int]:
        """Row indices in the run's episode order (task order, then trial)."""
        return sorted(range(len(self)), key=self._place)

    def usage(self, order: Sequence[int]) -> UsageTotals:
        return UsageTotals.of_counts(
            (tuple(c[i] for c in self._usage), self._steps[i]) for i in order
        )

    def answers(self, order: Sequence[int]) -> dict[EpisodeKey, str | None]:
        out: dict[EpisodeKey, str | None] = {}
        for i in order:
            task, trial = self._place(i)
            out[(self.tasks[task].id, trial)] = self._answers[i]
        return out


async def _stream(request: _Request, scored: _Scored) -> _Streamed:
    """One pass over the run's trajectories (the latest of each episode, in file order): each is
    labelled (``_Labeller``), step-scored into a table, and reduced to a row (``_EpisodeRows``),
    then dropped. Everything is then put in the run's episode order, not the order episodes
    finished in: scores (bootstrap intervals included) must not depend on which finished first."""
    scorer = StepScorer(scored.tasks, scored.suite, request.steps, request.similarity)
    labeller = _Labeller(request, scored)
    rows = _EpisodeRows(scored.tasks)
    stray = 0
    world = scored.suite.world
    tasks = {t.id: t for t in scored.tasks}
    for traj in scored.run.latest():
        if traj.scenario_id not in rows.position:
            stray += 1
            continue
        if world is not None and traj.nodes:  # the state checks, computed again from the world
            verdict = world_verdict(world, tasks[traj.scenario_id], traj)
            traj.world = verdict.model_dump(mode="json")
        scorer.add(traj)
        rows.add(traj)
        await labeller.add(traj)
    if stray:
        note = f"{stray} trajectories of tasks outside the run's selection were ignored"
        scored.notes.insert(scored.stray_note_at, note)
    labels = await labeller.done(rows)
    order = rows.order()
    nl = labeller.nl.summary
    return _Streamed(
        nl=nl if nl.episodes else None,
        labels=labels,
        steps=scorer.reports(scored.seed, order),
        usage=rows.usage(order),
        answers=rows.answers(order),
    )


def _keys(trajs: Sequence[Trajectory]) -> list[EpisodeKey]:
    return [(t.scenario_id, t.trial) for t in trajs]


def _open_reference(scored: _Scored, reference_run: str | Path) -> LoadedRun:
    """The reference run, checked before anything is labelled: it must share a task with the
    run (``ConfigError`` when none), and the notes say how many and, when the suite versions
    differ, name both."""
    ref = load_run(reference_run)
    ids = {t.id for t in scored.tasks}
    theirs = {str(k[0]) for k in ref.manifest.episodes} or {t.scenario_id for t in ref.latest()}
    shared = len(ids & theirs)
    run_id, ref_id = scored.run.manifest.run_id, ref.manifest.run_id
    if not shared:
        raise ConfigError(
            f"run {run_id} and the reference {ref_id} share no task (episodes pair by task "
            "id): there is nothing to compare"
        )
    scored.notes.append(
        f"{shared} task(s) shared with the reference {ref_id} (of {len(ids)} in this run, "
        f"{len(theirs)} in the reference)"
    )
    mine, other = scored.run.manifest.suite, ref.manifest.suite
    if mine.fingerprint != other.fingerprint:
        scored.notes.append(
            f"warning: the reference {ref_id} ran on suite {other.name} "
            f"({other.fingerprint.removeprefix('sha256:')[:12]}), this run on suite {mine.name} "
            f"({mine.fingerprint.removeprefix('sha256:')[:12]}): tool behaviour was not "
            "identical for the two runs"
        )
    return ref


async def _reference(
    request: _Request, scored: _Scored, labels: list[EpisodeLabel], ref: LoadedRun
) -> ReferenceComparison:
    """The comparison with the reference run, whose episodes are labelled over what it planned
    itself (of the candidate's tasks), as ``sandbox compare`` labels every run."""
    ids = {t.id for t in scored.tasks}
    ref_trajs = [t for t in read_trajectories(ref.path) if t.scenario_id in ids]
    ref_keys = [k for k in run_tasks(ref, scored.suite)[1] if k[0] in ids]
    proto, judge, settings = request.protocol, request.judge, request.settings
    ref_labels = await proto.label(ref_trajs, scored.tasks, ref_keys, judge, settings)
    trajs = scored.trajectories()
    return await compare_with_reference(
        proto,
        RunSide(name=scored.run.manifest.run_id, trajectories=trajs, labels=labels),
        RunSide(name=ref.manifest.run_id, trajectories=ref_trajs, labels=ref_labels),
        scored.tasks,
        judge,
        settings,
        seed=scored.seed,
        reference_run=ref.manifest.run_id,
    )


async def _evaluate_run(
    run_dir: str | Path, suite: Suite | str | Path | None, request: _Request
) -> RunScores:
    scored = _scored_run(run_dir, suite, request.seed)
    ref = None
    if request.reference_run is not None:  # checked before the judge is asked anything
        ref = _open_reference(scored, request.reference_run)
    streamed = await _stream(request, scored)
    labels = streamed.labels
    reference = None
    if ref is not None:
        reference = await _reference(request, scored, labels, ref)
    steps = streamed.steps
    scores = _run_scores(request, scored, labels, streamed.usage)
    scores.step_scores = steps.pop(DEFAULT_STEP_PROTOCOL, None)
    scores.step_protocols = steps
    scores.reference = reference
    scores.nl_assertions = streamed.nl
    if streamed.nl is not None:
        scores.notes.append(streamed.nl.note())
    scores._answers = streamed.answers
    scores._scoring_rule = request.protocol.scoring_rule
    return scores


def _run_scores(
    request: _Request, scored: _Scored, labels: list[EpisodeLabel], usage: UsageTotals
) -> RunScores:
    """The scores of the outcome half (labels, pass rate, usage, infrastructure)."""
    proto, judge, manifest = request.protocol, request.judge, scored.run.manifest
    at_k, hat_k = trial_rates([lb for lb in labels if lb.excluded is None])
    simulator = manifest.tools.get("simulator")
    return RunScores(
        run_id=manifest.run_id,
        protocol=proto.name,
        judge_settings=(
            effective_settings(proto, request.settings, judge) if judge is not None else None
        ),
        suite={
            "name": scored.suite.name,
            "version": scored.suite.meta.version,
            "fingerprint": manifest.suite.fingerprint or scored.suite.fingerprint,
        },
        agent=str(manifest.agent.get("name") or manifest.config.agent.name),
        model=str(manifest.model.get("name") or manifest.config.model.name),
        tasks=len(scored.tasks),
        episodes=len(labels),
        trials=max(1, manifest.config.trials),
        pass_rate=proto.summarise(labels, scored.tasks, seed=scored.seed),
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        state_checks=state_checks(labels, scored.tasks, seed=scored.seed),
        usage=usage,
        price_source=str(manifest.model.get("price_source") or ""),
        simulator=simulator,
        infra=InfraSummary(
            retries=usage.model_retries + int((simulator or {}).get("retries", 0)),
            errors=sum(lb.infra_error for lb in labels),
            episodes=[f"{lb.task_id}#{lb.trial}" for lb in labels if lb.infra_error],
        ),
        judge=judge.usage.model_copy() if judge is not None else None,
        labels=labels,
        notes=scored.notes,
    )


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
    steps: StepSelection | None = None,
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
            steps=steps,
        )
    )
