"""The leaderboard: one row per (suite, model, agent) over runs that already exist.

Rows are built from each run's ``scores.json`` (labels, usage, step scores); only the win rate
against a reference run reads trajectories (ToolEval's rules look at the steps). Runs of one
(suite, model, agent) are pooled: their episodes count as trials of the same tasks.

- ``pass_rate``: the mean over tasks of each task's mean score (solved 1, unsure 0.5, unsolved
  0): with one episode per task, or the same number for every task, it is the plain mean over
  episodes, as in ``scores.json``. Its 95% interval is a seeded bootstrap over tasks (a cluster
  bootstrap when tasks have several episodes).
- ``pass_at_k`` / ``pass_hat_k``: for k up to the fewest episodes of any task, when that is > 1.
- ``win_rate`` / ``tie_rate`` against ``reference``: every episode paired with the reference
  run's episode of the same task and trial (tasks both selected), ToolEval's rules deciding; a
  tie counts half in ``win_rate``.
- ``cost_usd``, ``tokens``, ``model_calls``, ``tool_calls``: means per episode (trajectory).
- ``step_scores``: each dimension's mean, pooled over runs weighted by its episode count.

A suite is its name and content fingerprint: runs on different suites, or on different
versions of one suite, are ranked apart and never in one ranking. Within a suite: pass rate,
then win rate, then the cheaper (cost, then tokens per episode) first. Runs without a readable
``scores.json`` are skipped, with the reason. May import ``sandbox.store``, ``sandbox.eval`` and
``sandbox.view.catalog``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, Field

from sandbox.errors import RunError
from sandbox.eval.evaluate import trial_rates
from sandbox.eval.pass_rate import EpisodeLabel
from sandbox.eval.stats import bootstrap_ci
from sandbox.eval.win_rate import PairOutcome, compare_episode, episode_facts, summarise_wins
from sandbox.store import EpisodeKey, read_trajectories
from sandbox.view.catalog import RunRecord

__all__ = ["Leaderboard", "LeaderboardRow", "SkippedRun", "build_leaderboard"]


class LeaderboardRow(BaseModel):
    rank: int = Field(description="Place within its suite, 1 first.")
    suite: str
    suite_fingerprint: str
    model: str
    agent: str
    runs: list[str] = Field(description="Run folders pooled in this row.")
    keys: list[str] = Field(description="The same runs as the viewer names them.")
    episodes: int
    tasks: int
    trials: int = Field(description="The most episodes any task has.")
    pass_rate: float
    pass_rate_ci: tuple[float, float]
    pass_at_k: dict[str, float] = Field(default_factory=dict)
    pass_hat_k: dict[str, float] = Field(default_factory=dict)
    is_reference: bool = False
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
    infra_errors: int = 0
    step_scores: dict[str, float] = Field(default_factory=dict)


class SkippedRun(BaseModel):
    run: str
    reason: str


class Leaderboard(BaseModel):
    reference: str | None = None
    rows: list[LeaderboardRow]
    skipped: list[SkippedRun] = Field(default_factory=list)

    def suites(self) -> list[tuple[str, str]]:
        """(name, fingerprint) of each ranking, in the order of the rows."""
        return list(dict.fromkeys((r.suite, r.suite_fingerprint) for r in self.rows))


def _labels(record: RunRecord) -> list[EpisodeLabel]:
    assert record.scores is not None
    return list(record.scores.labels)


def _pass_rate(labels: Sequence[EpisodeLabel], seed: int) -> tuple[float, tuple[float, float]]:
    per_task: dict[str, list[float]] = {}
    for lb in labels:
        per_task.setdefault(lb.task_id, []).append(lb.score)
    means = [sum(v) / len(v) for v in per_task.values()]
    iv = bootstrap_ci(means, seed=seed)
    return iv.value, (iv.low, iv.high)


def _outcomes(record: RunRecord, reference: RunRecord) -> list[PairOutcome]:
    ref_labels = {(lb.task_id, lb.trial): lb for lb in _labels(reference)}
    labels = {(lb.task_id, lb.trial): lb for lb in _labels(record)}
    common = {k[0] for k in ref_labels} & {k[0] for k in labels}
    keys: list[EpisodeKey] = [k for k in dict.fromkeys([*labels, *ref_labels]) if k[0] in common]
    trajs = {(t.scenario_id, t.trial): t for t in read_trajectories(record.path)}
    ref_trajs = {(t.scenario_id, t.trial): t for t in read_trajectories(reference.path)}
    return [
        compare_episode(
            episode_facts(trajs.get(k), labels.get(k)),
            episode_facts(ref_trajs.get(k), ref_labels.get(k)),
            k[0],
            k[1],
        )
        for k in keys
    ]


def _row(group: list[RunRecord], reference: RunRecord | None) -> LeaderboardRow:
    first = group[0].entry
    labels = [lb for r in group for lb in _labels(r)]
    seeds = {r.manifest.seed for r in group if r.manifest is not None}
    seed = seeds.pop() if len(seeds) == 1 else 0
    rate, ci = _pass_rate(labels, seed)
    at_k, hat_k = trial_rates(labels)
    per_task = Counter(lb.task_id for lb in labels)
    trajectories = sum(r.scores.usage.episodes for r in group if r.scores) or 1
    usage = [r.scores.usage for r in group if r.scores]
    weighted: dict[str, list[float]] = {}
    for r in group:
        if r.scores is None or r.scores.step_scores is None:
            continue
        for dim, iv in r.scores.step_scores.intervals.items():
            if iv.n > 0:
                acc = weighted.setdefault(dim, [0.0, 0.0])
                acc[0] += iv.value * iv.n
                acc[1] += iv.n
    row = LeaderboardRow(
        rank=0,
        suite=first.suite,
        suite_fingerprint=first.suite_fingerprint,
        model=first.model,
        agent=first.agent,
        runs=[str(r.path) for r in group],
        keys=[r.entry.key for r in group],
        episodes=len(labels),
        tasks=len(per_task),
        trials=max(per_task.values(), default=0),
        pass_rate=rate,
        pass_rate_ci=ci,
        pass_at_k=at_k,
        pass_hat_k=hat_k,
        cost_usd=sum(u.cost for u in usage) / trajectories,
        tokens=sum(u.tokens for u in usage) / trajectories,
        model_calls=sum(u.model_calls for u in usage) / trajectories,
        tool_calls=sum(u.tool_calls for u in usage) / trajectories,
        infra_errors=sum(lb.infra_error for lb in labels),
        step_scores={d: v / n for d, (v, n) in sorted(weighted.items())},
    )
    if reference is None or reference.entry.suite_fingerprint != first.suite_fingerprint:
        return row
    if any(r.path.resolve() == reference.path.resolve() for r in group):
        row.is_reference = True
        return row
    outcomes = [o for r in group for o in _outcomes(r, reference)]
    win = summarise_wins(outcomes, candidate=first.agent, reference=reference.entry.key, seed=seed)
    row.win_rate, row.win_rate_ci = win.win_rate.value, (win.win_rate.low, win.win_rate.high)
    row.tie_rate = win.ties / win.n if win.n else 0.0
    row.wins, row.losses, row.ties = win.wins, win.losses, win.ties
    return row


def build_leaderboard(
    records: Sequence[RunRecord], reference: RunRecord | None = None
) -> Leaderboard:
    """Rank the scored runs among ``records`` (the reference joins them when it is not there)."""
    if reference is not None and reference.scores is None:
        raise RunError(
            f"the reference run {reference.path} has no readable scores.json "
            f"({reference.entry.error or 'not evaluated'}); run `sandbox eval {reference.path}`"
        )
    pool = list(records)
    if reference is not None and all(r.path.resolve() != reference.path.resolve() for r in pool):
        pool.append(reference)
    skipped: list[SkippedRun] = []
    groups: dict[tuple[str, str, str, str], list[RunRecord]] = {}
    for r in pool:
        if r.scores is None:
            why = r.entry.error or (
                "still running" if r.entry.status == "running" else "no scores.json"
            )
            skipped.append(
                SkippedRun(run=str(r.path), reason=f"{why}; run `sandbox eval {r.path}`")
            )
            continue
        e = r.entry
        groups.setdefault((e.suite, e.suite_fingerprint, e.model, e.agent), []).append(r)
    rows = [_row(g, reference) for g in groups.values()]
    rows.sort(
        key=lambda r: (
            r.suite,
            r.suite_fingerprint,
            -r.pass_rate,
            -(r.win_rate if r.win_rate is not None else 0.5),
            r.cost_usd,
            r.tokens,
            r.model,
            r.agent,
        )
    )
    for suite in dict.fromkeys((r.suite, r.suite_fingerprint) for r in rows):
        ranked = [row for row in rows if (row.suite, row.suite_fingerprint) == suite]
        for place, row in enumerate(ranked, 1):
            row.rank = place
    return Leaderboard(
        reference=str(reference.path) if reference is not None else None,
        rows=rows,
        skipped=skipped,
    )
