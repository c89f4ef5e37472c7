"""The leaderboard: one row per (suite, model, agent, protocol, judge) over runs that exist.

Rows are built from each run's ``scores.json`` (labels, usage, step scores); only the win rate
against a reference run reads trajectories (ToolEval's rules look at the steps). Runs pool only
when they share the suite (name and content fingerprint), the model, the agent, the evaluation
protocol and the judge: runs scored under different protocols or judges are different rows.

- The headline (``pass_rate``, ``pass_rate_ci``, ``n``, ``excluded``; ``headline``) is
  ``sandbox.eval.headline``'s, the one ``sandbox eval`` prints (``sandbox.view.pooling``): a
  row of one run shows that run's ``scores.json`` figure as it is; a row of several pools their
  episodes under the same rule. Over no episode it is ``None`` (``n/a``).
- Distinct samples (``sandbox.view.pooling``): an episode is the sample ``(task, run seed,
  trial)``; an identical seeded repeat counts once, from the newest run; ``repeats`` names the
  runs that repeated one and ``samples`` counts the distinct ``(seed, trial)`` samples. So
  pass@k / pass^k (k up to the fewest distinct samples of any task, when that is > 1) are never
  computed over copies of one sample.
- ``win_rate`` / ``tie_rate`` against ``reference``: every episode paired with the reference
  run's episode of the same task and trial (tasks both selected; ``shared_tasks`` says how
  many), ToolEval's rules deciding; a tie counts half in ``win_rate``. A row that shares no
  task with the reference gets none, with a warning; when no row shares a task with it,
  ``build_leaderboard`` refuses (``ConfigError``). Rows of another suite version get none
  either, and a warning names both fingerprints.
- ``state_checks`` (a world suite's rows): each state check's rate with its interval and
  pass@k / pass^k, ``all`` first: a single run's own (``scores.json``), several pooled under the
  same rule (``sandbox.view.pooling``).
- ``cost_usd``, ``tokens``, ``model_calls``, ``tool_calls``: means per episode (trajectory).
- ``infra_errors``, ``user_failures``: the pooled episodes an infrastructure error, or a failure
  of their conversation's user, ended; both are left out of the pass rate (``excluded``:
  ``infra``, ``user``), as ``sandbox eval`` leaves them out.
- ``step_scores``: each step dimension's mean, pooled over runs weighted by its episode count,
  of every step protocol a run was scored with: the default step protocol's measures and those
  of metrics added to it (``METRIC.MEASURE``), another protocol's as ``PROTOCOL:MEASURE``
  (``teval:instruct``), in the order the registries give (``Leaderboard.dimensions``;
  ``headline``: one per metric, for narrow tables).

A suite is its name and content fingerprint: runs on different suites, or on different
versions of one suite, are ranked apart and never in one ranking. Within a suite: pass rate
(rows without one last), then win rate, then the cheaper (cost, then tokens per episode) first.
Runs without a readable ``scores.json`` are skipped, with the reason. May import
``sandbox.store``, ``sandbox.eval``, ``sandbox.view.catalog`` and ``sandbox.view.pooling``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, Field

from sandbox.errors import ConfigError, RunError
from sandbox.eval.headline import Headline
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.state_checks import CheckRate
from sandbox.eval.stats import Interval
from sandbox.eval.step_report import StepReport
from sandbox.eval.steps.dimensions import (
    headline_dimensions,
    qualified,
    step_dimensions,
    under_protocol,
)
from sandbox.eval.win_rate import PairOutcome, compare_episode, episode_facts, summarise_wins
from sandbox.store import EpisodeKey, read_trajectories
from sandbox.view.catalog import RunRecord
from sandbox.view.pooling import (
    Pool,
    distinct_samples,
    judge_label,
    pool_headline,
    pool_state_checks,
    run_seed,
)

__all__ = ["Leaderboard", "LeaderboardRow", "SkippedRun", "build_leaderboard"]


class LeaderboardRow(BaseModel):
    rank: int = Field(description="Place within its suite, 1 first.")
    suite: str
    suite_fingerprint: str
    model: str
    agent: str
    protocol: str = Field(default="default", description="The evaluation protocol of the labels.")
    judge: str | None = Field(
        default=None, description="The judge the labels came from (None: rules and checks only)."
    )
    judge_kind: str | None = Field(
        default=None, description="llm, or rules: rules-judge, which is not an LLM."
    )
    runs: list[str] = Field(description="Run folders pooled in this row.")
    keys: list[str] = Field(description="The same runs as the viewer names them.")
    samples: int = Field(default=1, description="Distinct (seed, trial) samples pooled.")
    repeats: list[str] = Field(
        default_factory=list,
        description="Runs repeating a sample of a newer run of the row (same seed and trial): "
        "those episodes are counted once.",
    )
    episodes: int = Field(description="Distinct episodes labelled (left-out ones included).")
    n: int = Field(default=0, description="Episodes the pass rate counts.")
    tasks: int
    trials: int = Field(description="The most distinct samples any task has.")
    pass_rate: float | None = Field(description="None when no episode counts (n/a).")
    pass_rate_ci: tuple[float, float] | None
    excluded: dict[str, int] = Field(
        default_factory=dict, description="Episodes left out of the pass rate, by reason."
    )
    headline: Headline | None = Field(default=None, description="The pass rate as shown.")
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    state_checks: list[CheckRate] = Field(
        default_factory=list,
        description="In a world: each state check ('all' first) as sandbox eval gives it.",
    )
    is_reference: bool = False
    shared_tasks: int | None = Field(
        default=None, description="Tasks this row shares with the reference run."
    )
    win_rate: float | None = None
    win_rate_ci: tuple[float, float] | None = None
    tie_rate: float | None = None
    wins: int | None = None
    losses: int | None = None
    ties: int | None = None
    cost_usd: float = Field(description="Mean model cost per episode.")
    tokens: float = Field(description="Mean tokens per episode.")
    model_calls: float
    tool_calls: float
    infra_errors: int = Field(
        default=0, description="Episodes an infrastructure error ended (left out of the rate)."
    )
    user_failures: int = Field(
        default=0,
        description="Episodes a failure of their conversation's user ended (left out of the "
        "rate, as infrastructure errors are: not the agent's).",
    )
    step_scores: dict[str, float] = Field(default_factory=dict)


class SkippedRun(BaseModel):
    run: str
    reason: str


class Leaderboard(BaseModel):
    reference: str | None = None
    rows: list[LeaderboardRow]
    dimensions: list[str] = Field(
        default_factory=list,
        description="The step dimensions of the rows, in report order (from the step-metric "
        "registry).",
    )
    headline: list[str] = Field(
        default_factory=list,
        description="The one dimension per step metric a narrow table shows (its headline).",
    )
    skipped: list[SkippedRun] = Field(default_factory=list)
    warnings: list[str] = Field(
        default_factory=list, description="What the reader must know (win rates not computed)."
    )

    def suites(self) -> list[tuple[str, str]]:
        """(name, fingerprint) of each ranking, in the order of the rows."""
        return list(dict.fromkeys((r.suite, r.suite_fingerprint) for r in self.rows))


def _outcomes(
    record: RunRecord, labels: Sequence[EpisodeLabel], reference: RunRecord
) -> list[PairOutcome]:
    ref_labels = {(lb.task_id, lb.trial): lb for lb in reference.labels.values()}
    mine = {(lb.task_id, lb.trial): lb for lb in labels}
    common = {k[0] for k in ref_labels} & {k[0] for k in mine}
    keys: list[EpisodeKey] = [k for k in dict.fromkeys([*mine, *ref_labels]) if k[0] in common]
    trajs = {(t.scenario_id, t.trial): t for t in read_trajectories(record.path)}
    ref_trajs = {(t.scenario_id, t.trial): t for t in read_trajectories(reference.path)}
    return [
        compare_episode(
            episode_facts(trajs.get(k), mine.get(k)),
            episode_facts(ref_trajs.get(k), ref_labels.get(k)),
            k[0],
            k[1],
        )
        for k in keys
    ]


def _step_scores(group: list[RunRecord]) -> dict[str, float]:
    """Each step dimension's mean over the runs, weighted by its episodes, for every step
    protocol the runs were scored with: the default protocol's measures and those of metrics
    added to it (``METRIC.MEASURE``), any other protocol's as ``PROTOCOL:MEASURE``; in report
    order."""
    weighted: dict[str, list[float]] = {}
    for r in group:
        if r.scores is None:
            continue
        for protocol, report in r.scores.step_protocol_reports().items():
            for dim, iv in step_intervals(report):
                if iv.n > 0:
                    acc = weighted.setdefault(under_protocol(protocol, dim), [0.0, 0.0])
                    acc[0] += iv.value * iv.n
                    acc[1] += iv.n
    return {d: weighted[d][0] / weighted[d][1] for d in step_dimensions(weighted)}


def step_intervals(report: StepReport) -> list[tuple[str, Interval]]:
    """A step report's intervals by dimension name (added metrics' as ``METRIC.MEASURE``)."""
    out = list(report.intervals.items())
    for metric, added in report.metrics.items():
        out += [(qualified(metric, d), iv) for d, iv in added.intervals.items()]
    return out


def _row(group: list[RunRecord]) -> tuple[LeaderboardRow, Pool]:
    first = group[0]
    pool = distinct_samples(group)
    head, at_k, hat_k = pool_headline(pool)
    labels = pool.labels
    per_task = Counter(lb.task_id for lb in labels)
    used = [r for r, _ in pool.runs]
    usage = [r.scores.usage for r in used if r.scores]
    trajectories = sum(u.episodes for u in usage) or 1
    row = LeaderboardRow(
        rank=0,
        suite=first.entry.suite,
        suite_fingerprint=first.entry.suite_fingerprint,
        model=first.entry.model,
        agent=first.entry.agent,
        protocol=first.scores.protocol if first.scores else "default",
        judge=judge_label(first),
        judge_kind=first.scores.judge.kind if first.scores and first.scores.judge else None,
        runs=[str(r.path) for r in group],
        keys=[r.entry.key for r in group],
        samples=len({(run_seed(r), lb.trial) for r, ls in pool.runs for lb in ls}),
        repeats=pool.repeats,
        episodes=len(labels),
        n=head.n,
        tasks=len(per_task),
        trials=max(per_task.values(), default=0),
        pass_rate=head.pass_rate,
        pass_rate_ci=None if head.low is None or head.high is None else (head.low, head.high),
        excluded=head.excluded,
        headline=head,
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        state_checks=pool_state_checks(pool),
        cost_usd=sum(u.cost for u in usage) / trajectories,
        tokens=sum(u.tokens for u in usage) / trajectories,
        model_calls=sum(u.model_calls for u in usage) / trajectories,
        tool_calls=sum(u.tool_calls for u in usage) / trajectories,
        infra_errors=sum(lb.infra_error for lb in labels),
        user_failures=sum(lb.excluded == "user" for lb in labels),
        step_scores=_step_scores(used),
    )
    return row, pool


def _against(row: LeaderboardRow, pool: Pool, reference: RunRecord) -> str | None:
    """Fill the row's win rate against ``reference``; a warning when it cannot have one."""
    ref = reference.entry
    if any(Path(run).resolve() == reference.path.resolve() for run in row.runs):
        row.is_reference = True
        return None
    who = f"{row.model} / {row.agent}"
    if ref.suite_fingerprint != row.suite_fingerprint:
        return (
            f"{who} on suite {row.suite} ({_short(row.suite_fingerprint)}) has no win rate: the "
            f"reference {reference.path} ran on suite {ref.suite} ({_short(ref.suite_fingerprint)})"
        )
    reference_tasks = {lb.task_id for lb in reference.labels.values()}
    row.shared_tasks = len({lb.task_id for lb in pool.labels} & reference_tasks)
    if not row.shared_tasks:
        return f"{who} shares no task with the reference {reference.path}: no win rate"
    outcomes = [o for r, labels in pool.runs for o in _outcomes(r, labels, reference)]
    seeds = {run_seed(r) for r, _ in pool.runs}
    win = summarise_wins(
        outcomes, candidate=row.agent, reference=ref.key, seed=seeds.pop() if len(seeds) == 1 else 0
    )
    if win.n:
        row.win_rate, row.win_rate_ci = win.win_rate.value, (win.win_rate.low, win.win_rate.high)
        row.tie_rate = win.ties / win.n
    row.wins, row.losses, row.ties = win.wins, win.losses, win.ties
    return None


def _short(fingerprint: str) -> str:
    return fingerprint.removeprefix("sha256:")[:12]


def _groups(records: Sequence[RunRecord]) -> tuple[list[list[RunRecord]], list[SkippedRun]]:
    """The scored runs by (suite, fingerprint, model, agent, protocol, judge); the others."""
    skipped: list[SkippedRun] = []
    groups: dict[tuple[str, str, str, str, str, str | None], list[RunRecord]] = {}
    for r in records:
        if r.scores is None:
            why = r.entry.error or (
                "still running" if r.entry.status == "running" else "no scores.json"
            )
            skipped.append(
                SkippedRun(run=str(r.path), reason=f"{why}; run `sandbox eval {r.path}`")
            )
            continue
        e = r.entry
        key = (e.suite, e.suite_fingerprint, e.model, e.agent, r.scores.protocol, judge_label(r))
        groups.setdefault(key, []).append(r)
    return list(groups.values()), skipped


def _rank(rows: list[LeaderboardRow]) -> None:
    rows.sort(
        key=lambda r: (
            r.suite,
            r.suite_fingerprint,
            -(r.pass_rate if r.pass_rate is not None else -1.0),
            -(r.win_rate if r.win_rate is not None else 0.5),
            r.cost_usd,
            r.tokens,
            r.model,
            r.agent,
            r.protocol,
            r.judge or "",
        )
    )
    for suite in dict.fromkeys((r.suite, r.suite_fingerprint) for r in rows):
        ranked = [row for row in rows if (row.suite, row.suite_fingerprint) == suite]
        for place, row in enumerate(ranked, 1):
            row.rank = place


def build_leaderboard(
    records: Sequence[RunRecord], reference: RunRecord | None = None
) -> Leaderboard:
    """Rank the scored runs among ``records`` (the reference joins them when it is not there).

    ``ConfigError`` when a reference is given and no other row shares a task with it."""
    if reference is not None and reference.scores is None:
        raise RunError(
            f"the reference run {reference.path} has no readable scores.json "
            f"({reference.entry.error or 'not evaluated'}); run `sandbox eval {reference.path}`"
        )
    pool = list(records)
    if reference is not None and all(r.path.resolve() != reference.path.resolve() for r in pool):
        pool.append(reference)
    groups, skipped = _groups(pool)
    built = [_row(g) for g in groups]
    warnings: list[str] = []
    if reference is not None:
        warnings = [w for row, p in built if (w := _against(row, p, reference)) is not None]
        others = [row for row, _ in built if not row.is_reference]
        if others and not any(row.shared_tasks for row in others):
            raise ConfigError(
                f"--reference {reference.path} shares no task with any run ranked: there is "
                "nothing to compare (rank runs over the same tasks, or leave out --reference)"
            )
    rows = [row for row, _ in built]
    _rank(rows)
    present = {d for row in rows for d in row.step_scores}
    return Leaderboard(
        reference=str(reference.path) if reference is not None else None,
        rows=rows,
        dimensions=step_dimensions(present),
        headline=headline_dimensions(present),
        skipped=skipped,
        warnings=warnings,
    )
