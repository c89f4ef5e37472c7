"""The runs of one leaderboard row, pooled over distinct samples, and the row's headline.

An episode is the sample ``(task, run seed, trial)``. ``distinct_samples`` keeps, run by run
from the newest, the labels of samples no newer run of the row holds: an identical seeded repeat
(the same seed and trial) counts once, and the runs that repeated one are named
(``Pool.repeats``). ``pool_headline`` is the row's pass rate through ``sandbox.eval.headline``:
a single run held whole shows its own ``scores.json`` figure, as ``sandbox eval`` prints it;
several are pooled under the same rule (the labels that count, ``pass_rate.counts``; the mean
score with the task-clustered bootstrap interval, ``pass_rate.rate_summary``), with pass@k and
pass^k over the distinct samples. ``pool_state_checks`` gives the row's state checks in a world
the same way. May import ``sandbox.eval`` and ``sandbox.view.catalog``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from sandbox.eval.evaluate import trial_rates
from sandbox.eval.headline import Headline, headline
from sandbox.eval.pass_rate import EpisodeLabel, counts, rate_summary
from sandbox.eval.state_checks import CheckRate, state_checks
from sandbox.view.catalog import RunRecord

__all__ = [
    "Pool",
    "distinct_samples",
    "judge_label",
    "pool_headline",
    "pool_state_checks",
    "run_seed",
]


@dataclass
class Pool:
    """The runs of one row, newest first, each with the labels of its distinct samples."""

    runs: list[tuple[RunRecord, list[EpisodeLabel]]]
    repeats: list[str]

    @property
    def labels(self) -> list[EpisodeLabel]:
        return [lb for _, labels in self.runs for lb in labels]

    def whole_run(self) -> RunRecord | None:
        """The one run the row holds whole (its headline is that run's), if so."""
        if len(self.runs) != 1:
            return None
        record, labels = self.runs[0]
        assert record.scores is not None
        return record if len(labels) == len(record.scores.labels) else None


def judge_label(record: RunRecord) -> str | None:
    """The judge a run's labels came from, as rows key and show it (None: no judge)."""
    judge = record.scores.judge if record.scores is not None else None
    return judge.model if judge is not None else None


def run_seed(record: RunRecord) -> int:
    """The seed of the run (the sample an episode is, with its task and trial)."""
    return record.manifest.seed if record.manifest is not None else 0


def distinct_samples(group: Sequence[RunRecord]) -> Pool:
    """Each run's labels of samples no newer run of the group holds (see the module doc)."""
    newest = sorted(
        group,
        key=lambda r: (-(r.entry.started_at.timestamp() if r.entry.started_at else 0.0), r.path),
    )
    seen: set[tuple[str, int, int]] = set()
    pool = Pool([], [])
    for record in newest:
        assert record.scores is not None
        seed = run_seed(record)
        labels = record.scores.labels
        mine = [lb for lb in labels if (lb.task_id, seed, lb.trial) not in seen]
        if len(mine) < len(labels):
            pool.repeats.append(str(record.path))
        seen.update((lb.task_id, seed, lb.trial) for lb in labels)
        if mine:
            pool.runs.append((record, mine))
    return pool


def pool_headline(pool: Pool) -> tuple[Headline, dict[str, float], dict[str, float]]:
    """The row's headline and pass@k / pass^k: a whole single run's own, else pooled."""
    whole = pool.whole_run()
    if whole is not None and whole.scores is not None:
        scores = whole.scores
        return headline(scores.pass_rate), scores.pass_at_k, scores.pass_hat_k
    labels = pool.labels
    seeds = {run_seed(r) for r, _ in pool.runs}
    counted = [lb for lb in labels if counts(lb)]
    excluded = Counter(lb.excluded for lb in labels if lb.excluded is not None)
    rate = rate_summary(counted, seeds.pop() if len(seeds) == 1 else 0)
    at_k, hat_k = trial_rates(counted)
    return headline(rate, excluded=dict(sorted(excluded.items()))), at_k, hat_k


def pool_state_checks(pool: Pool) -> list[CheckRate]:
    """The row's state checks (``all`` first; none outside a world): a whole single run's
    own, else the same sums over the pooled labels (``sandbox.eval.state_checks``)."""
    whole = pool.whole_run()
    if whole is not None and whole.scores is not None:
        own = whole.scores.state_checks
        return own.rates() if own is not None else []
    seeds = {run_seed(r) for r, _ in pool.runs}
    pooled = state_checks(pool.labels, seed=seeds.pop() if len(seeds) == 1 else 0)
    return pooled.rates() if pooled is not None else []
