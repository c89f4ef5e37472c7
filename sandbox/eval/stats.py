"""Statistics for rates: seeded bootstrap intervals, exact paired tests, pass@k and pass^k.

Pure functions, standard library only, so every figure is reproducible from its inputs and seed.

- ``bootstrap_ci``: percentile bootstrap of a mean. With ``clusters`` (the task of each value) it
  is the cluster bootstrap: whole tasks are resampled, so the several trials of one task move
  together and the interval is as wide as the number of *tasks* warrants (episodes of one task
  are not independent draws). The mean of a resample is the ratio estimator (sum of its values
  over their count); with one value per task it is the plain bootstrap, draw for draw.
- ``bootstrap_columns``: the same bootstrap of several means over the same clusters, drawn
  together (a run's state checks: a rate and pass@k / pass^k at each k per check).
- ``mcnemar_exact`` / ``binomial_two_sided``: the exact McNemar (sign) test on paired outcomes.
- ``pass_at_k`` (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", §2.1) and
  ``pass_hat_k`` (Yao et al. 2024, tau-bench; ``pass_hat_k`` in its ``metrics/agent_metrics.py``).
- ``trial_ks``: the k those two are given over a run's trials (1 up to the fewest trials of any
  task, when that is 2 or more).
- ``population_std``: numpy's default ``std`` (ddof 0), which StableToolBench's
  ``eval_pass_rate.py`` prints as the "Std" of its per-sample pass rates.
- ``seeded_rng``: a ``random.Random`` derived from a seed and a key, so a draw never depends on
  the order in which items are processed.
Pure; imports nothing from the project.
"""

from __future__ import annotations

import hashlib
import math
import random
from collections import Counter
from collections.abc import Hashable, Sequence

from pydantic import BaseModel


class Interval(BaseModel):
    """A point estimate with its interval (``low``/``high``) and the number of units it is over."""

    value: float
    low: float
    high: float
    n: int
    level: float = 0.95


class PairedTest(BaseModel):
    """Exact McNemar (sign) test on paired binary outcomes.

    ``only_a``: units where only A succeeded; ``only_b``: only B; ties (both or neither) do not
    enter the test. ``p_value`` is two-sided.
    """

    only_a: int
    only_b: int
    both: int
    neither: int
    p_value: float

    @property
    def n(self) -> int:
        """The pairs tested."""
        return self.only_a + self.only_b + self.both + self.neither


def mean(values: Sequence[float]) -> float:
    return math.fsum(values) / len(values) if values else 0.0


def seeded_rng(seed: int, *parts: object) -> random.Random:
    """A generator determined by ``seed`` and the key ``parts`` (sha256 of their text)."""
    digest = hashlib.sha256("|".join(str(p) for p in (seed, *parts)).encode()).hexdigest()
    return random.Random(int(digest[:16], 16))


def population_std(values: Sequence[float]) -> float:
    """Standard deviation with ddof 0 (``numpy.std``'s default); 0.0 for fewer than 2 values."""
    if len(values) < 2:
        return 0.0
    m = mean(values)
    return math.sqrt(math.fsum((v - m) ** 2 for v in values) / len(values))


def _cluster_sums(values: Sequence[float], clusters: Sequence[Hashable]) -> list[tuple[float, int]]:
    sums: dict[Hashable, list[float]] = {}
    for v, c in zip(values, clusters, strict=True):
        sums.setdefault(c, []).append(v)
    return [(math.fsum(vs), len(vs)) for vs in sums.values()]


def bootstrap_ci(
    values: Sequence[float],
    *,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    clusters: Sequence[Hashable] | None = None,
) -> Interval:
    """Percentile bootstrap interval for the mean of ``values`` (e.g. per-episode scores 0/0.5/1).

    ``clusters`` (one id per value, e.g. the task id) makes it a cluster bootstrap: clusters are
    drawn with replacement and each resample's mean is the sum of the drawn clusters' values over
    their count. ``n`` is then still the number of values. Seeded with its own
    ``random.Random(seed)``: the same inputs give the same interval. With no values the interval
    is ``[0, 0]`` over ``n=0``; with a constant sample it collapses to a point. ``clusters`` of
    another length than ``values`` is a ``ValueError``, whatever the values.
    """
    if clusters is not None and len(clusters) != len(values):
        raise ValueError(f"{len(values)} values but {len(clusters)} cluster ids")
    n = len(values)
    if n == 0:
        return Interval(value=0.0, low=0.0, high=0.0, n=0, level=level)
    point = mean(values)
    if all(v == values[0] for v in values):
        return Interval(value=point, low=point, high=point, n=n, level=level)
    rng = random.Random(seed)
    groups = (
        _cluster_sums(values, clusters) if clusters is not None else [(float(v), 1) for v in values]
    )
    k = len(groups)
    means = []
    for _ in range(resamples):
        drawn = rng.choices(groups, k=k)
        means.append(math.fsum(s for s, _ in drawn) / sum(c for _, c in drawn))
    means.sort()
    alpha = (1.0 - level) / 2.0
    low = _quantile(means, alpha)
    high = _quantile(means, 1.0 - alpha)
    return Interval(value=point, low=min(low, point), high=max(high, point), n=n, level=level)


def bootstrap_columns(
    groups: Sequence[Sequence[tuple[float, int]]],
    *,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
) -> list[Interval]:
    """``bootstrap_ci``'s cluster bootstrap of several means over the same clusters at once.

    ``groups[i][j]`` is cluster ``i``'s ``(sum, count)`` for mean ``j`` (every count positive):
    mean ``j`` is its sums over its counts, and each resample draws the clusters as
    ``bootstrap_ci`` draws them (the same clusters for the same seed), for every mean at once.
    Clusters alike in every mean are counted rather than added one by one, so a resample costs
    one draw and one count of the clusters however many means there are. One mean gives
    ``bootstrap_ci``'s interval of the same values and clusters (to the last bits of the float
    sums). ``n`` of each interval is its total count; a mean whose clusters all have the same
    ratio has a point interval; no cluster gives no interval."""
    if not groups:
        return []
    means = len(groups[0])
    counts = [sum(g[j][1] for g in groups) for j in range(means)]
    points = [math.fsum(g[j][0] for g in groups) / counts[j] for j in range(means)]
    kinds: dict[tuple[tuple[float, int], ...], int] = {}
    ids = [kinds.setdefault(tuple(g), len(kinds)) for g in groups]
    alike = list(kinds)
    varies = [len({s / c for s, c in (k[j] for k in alike)}) > 1 for j in range(means)]
    drawn_means: list[list[float]] = [[] for _ in range(means)]
    rng = random.Random(seed)
    k = len(groups)
    for _ in range(resamples if any(varies) else 0):
        drawn = Counter(rng.choices(ids, k=k)).items()
        for j in range(means):
            if varies[j]:
                total = math.fsum(alike[d][j][0] * times for d, times in drawn)
                drawn_means[j].append(total / sum(alike[d][j][1] * times for d, times in drawn))
    alpha = (1.0 - level) / 2.0
    out = []
    for j in range(means):
        point = points[j]
        low = high = point
        if varies[j]:
            drawn_means[j].sort()
            low = min(_quantile(drawn_means[j], alpha), point)
            high = max(_quantile(drawn_means[j], 1.0 - alpha), point)
        out.append(Interval(value=point, low=low, high=high, n=counts[j], level=level))
    return out


def _quantile(sorted_values: list[float], q: float) -> float:
    """Linear-interpolated quantile of an already sorted list."""
    pos = q * (len(sorted_values) - 1)
    lo = math.floor(pos)
    hi = min(lo + 1, len(sorted_values) - 1)
    frac = pos - lo
    return sorted_values[lo] * (1.0 - frac) + sorted_values[hi] * frac


def binomial_two_sided(k: int, n: int) -> float:
    """Exact two-sided p-value of ``k`` successes in ``n`` fair coin flips (sign test).

    Doubles the smaller tail, capped at 1 (the usual exact McNemar definition).
    """
    if n == 0:
        return 1.0
    tail = min(k, n - k)
    p = math.fsum(math.comb(n, i) for i in range(tail + 1)) / 2**n
    return min(1.0, 2.0 * p)


def mcnemar_exact(a: Sequence[bool], b: Sequence[bool]) -> PairedTest:
    """Exact McNemar test of two strategies' successes on the same units (same order)."""
    if len(a) != len(b):
        raise ValueError(f"paired samples differ in length: {len(a)} vs {len(b)}")
    only_a = sum(1 for x, y in zip(a, b, strict=True) if x and not y)
    only_b = sum(1 for x, y in zip(a, b, strict=True) if y and not x)
    both = sum(1 for x, y in zip(a, b, strict=True) if x and y)
    neither = len(a) - only_a - only_b - both
    p = binomial_two_sided(only_a, only_a + only_b)
    return PairedTest(only_a=only_a, only_b=only_b, both=both, neither=neither, p_value=p)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k (Chen et al. 2021): chance that at least one of k draws out of n trials,
    c of them correct, is correct: ``1 - C(n-c, k) / C(n, k)``."""
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k (tau-bench): chance that all of k draws out of n trials are correct:
    ``C(c, k) / C(n, k)``."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n):
        raise ValueError(f"need 0 <= c <= n, got c={c}, n={n}")
    if not (1 <= k <= n):
        raise ValueError(f"need 1 <= k <= n, got k={k}, n={n}")


def trial_ks(counts: Sequence[tuple[int, int]]) -> list[int]:
    """The k of pass@k and pass^k over per-task ``(n, c)`` counts: 1 up to the fewest trials of
    any task, when that is 2 or more; none otherwise (one trial of a task says nothing of k)."""
    if not counts:
        return []
    k_max = min(n for n, _ in counts)
    return list(range(1, k_max + 1)) if k_max >= 2 else []


def mean_pass_at_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """pass@k per task from ``(n, c)`` counts, averaged over tasks."""
    return mean([pass_at_k(n, c, k) for n, c in counts])


def mean_pass_hat_k(counts: Sequence[tuple[int, int]], k: int) -> float:
    """pass^k per task from ``(n, c)`` counts, averaged over tasks."""
    return mean([pass_hat_k(n, c, k) for n, c in counts])
