"""``sandbox.eval.stats`` against its documented definitions, worked out by hand or recomputed
here from the definition (never read back from the module's output): the seeded generator's key,
the percentile bootstrap's draws and quantiles, the exact sign test, pass@k / pass^k at their
boundaries, and the messages a user reads when the inputs are wrong."""

from __future__ import annotations

import hashlib
import math
import random
import re

import pytest

from sandbox.eval.stats import (
    binomial_two_sided,
    bootstrap_ci,
    mcnemar_exact,
    mean,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    population_std,
    seeded_rng,
)


def test_the_mean_of_nothing_is_zero_and_of_values_their_average() -> None:
    assert mean([]) == 0.0
    assert mean([1.0, 2.0, 4.5]) == pytest.approx(7.5 / 3)
    assert mean_pass_at_k([], 1) == 0.0 and mean_pass_hat_k([], 1) == 0.0


def test_the_seeded_generator_is_keyed_by_the_sha256_of_seed_and_parts() -> None:
    """``seeded_rng(seed, *parts)``: ``random.Random`` seeded with the first 16 hex digits of the
    sha256 of the seed and parts joined by ``|``; a draw is fixed by its key alone."""
    digest = hashlib.sha256(b"7|order|task-1|0").hexdigest()
    expected = random.Random(int(digest[:16], 16))
    got = seeded_rng(7, "order", "task-1", 0)
    assert [got.random() for _ in range(3)] == [expected.random() for _ in range(3)]


def test_population_std_is_numpys_ddof_0() -> None:
    # mean 2.5; squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5; 5 / 4 = 1.25
    assert population_std([1.0, 2.0, 3.0, 4.0]) == pytest.approx(math.sqrt(1.25))
    assert population_std([1.0, 3.0]) == pytest.approx(1.0)  # two values are enough
    assert population_std([]) == 0.0


def _percentile_bootstrap(
    groups: list[tuple[float, int]], seed: int, resamples: int, level: float
) -> tuple[float, float]:
    """The documented bootstrap, recomputed: ``random.Random(seed)`` draws ``len(groups)``
    groups with replacement per resample (``choices``), each resample's mean is the drawn sums
    over the drawn counts, and the bounds are the linearly interpolated ``(1 - level) / 2`` and
    ``1 - (1 - level) / 2`` quantiles of the sorted means."""
    rng = random.Random(seed)
    means = sorted(
        sum(s for s, _ in drawn) / sum(c for _, c in drawn)
        for drawn in (rng.choices(groups, k=len(groups)) for _ in range(resamples))
    )

    def quantile(q: float) -> float:
        pos = q * (len(means) - 1)
        lo = int(pos)
        hi = min(lo + 1, len(means) - 1)
        return means[lo] + (means[hi] - means[lo]) * (pos - lo)

    alpha = (1 - level) / 2
    return quantile(alpha), quantile(1 - alpha)


def test_the_bootstrap_draws_and_quantiles_are_the_documented_ones() -> None:
    values = [1.0, 0.0, 0.5, 1.0, 0.0, 1.0, 1.0]
    point = sum(values) / len(values)
    for seed, resamples, level in ((0, 2000, 0.95), (3, 101, 0.8), (11, 7, 0.5)):
        ci = bootstrap_ci(values, seed=seed, resamples=resamples, level=level)
        low, high = _percentile_bootstrap([(v, 1) for v in values], seed, resamples, level)
        assert (ci.value, ci.n, ci.level) == (pytest.approx(point), 7, level)
        assert (ci.low, ci.high) == (
            pytest.approx(min(low, point)),
            pytest.approx(max(high, point)),
        )
    # two resamples: the upper bound interpolates between the two sorted means
    for seed in range(10):
        ci = bootstrap_ci(values, seed=seed, resamples=2, level=0.5)
        low, high = _percentile_bootstrap([(v, 1) for v in values], seed, 2, 0.5)
        assert (ci.low, ci.high) == (
            pytest.approx(min(low, point)),
            pytest.approx(max(high, point)),
        )


def test_the_bootstrap_defaults_are_2000_resamples_at_95_percent_with_seed_0() -> None:
    """Values spread enough that every resample count and seed moves the bounds."""
    values = [0.013 * i**1.5 % 1 for i in range(1, 40)]
    default = bootstrap_ci(values)
    assert default == bootstrap_ci(values, seed=0, resamples=2000, level=0.95)
    assert default.level == 0.95
    assert default != bootstrap_ci(values, seed=1)
    assert default != bootstrap_ci(values, resamples=2001)


def test_the_cluster_bootstrap_draws_whole_tasks() -> None:
    """Clusters ``a`` (1, 0, 1), ``b`` (0) and ``c`` (1, 1) are drawn as (sum, count) groups
    in the order they first appear: (2, 3), (0, 1), (2, 2)."""
    values = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0]
    clusters = ["a", "a", "b", "a", "c", "c"]
    ci = bootstrap_ci(values, seed=4, resamples=300, clusters=clusters)
    low, high = _percentile_bootstrap([(2.0, 3), (0.0, 1), (2.0, 2)], 4, 300, 0.95)
    assert (ci.value, ci.n) == (pytest.approx(4 / 6), 6)
    assert (ci.low, ci.high) == (pytest.approx(min(low, 4 / 6)), pytest.approx(max(high, 4 / 6)))


def test_an_interval_always_holds_its_point_estimate() -> None:
    """Even a single resample, which may fall on either side of the mean, gives an interval
    that holds the point (the bounds are widened to it)."""
    values = [1.0, 0.0, 0.0, 0.5, 1.0]
    below = above = 0
    for seed in range(30):
        ci = bootstrap_ci(values, seed=seed, resamples=1)
        assert ci.low <= ci.value <= ci.high
        assert ci.low == ci.value or ci.high == ci.value
        below += ci.low < ci.value
        above += ci.high > ci.value
    assert below and above  # single draws fell on both sides of the mean


def test_degenerate_samples_keep_their_level_and_size() -> None:
    assert bootstrap_ci([], level=0.9).model_dump() == {
        "value": 0.0,
        "low": 0.0,
        "high": 0.0,
        "n": 0,
        "level": 0.9,
    }
    const = bootstrap_ci([0.5, 0.5, 0.5], level=0.8)
    assert (const.value, const.low, const.high, const.n, const.level) == (0.5, 0.5, 0.5, 3, 0.8)
    # exactly the point, even where adding up clusters of other sizes would round differently
    for clusters in (["a", "b", "b"], list("abbcccc")):
        tenths = bootstrap_ci([0.1] * len(clusters), clusters=clusters)
        assert tenths.low == tenths.value == tenths.high
    # only the first value differs: not a constant sample, so it is resampled
    spread = bootstrap_ci([0.0, 1.0, 1.0, 1.0], seed=1)
    assert spread.low < spread.value == 0.75


def test_values_and_cluster_ids_must_pair_up() -> None:
    """Whatever the values: a constant or empty sample with the wrong ids is refused too."""
    with pytest.raises(ValueError, match=r"^3 values but 2 cluster ids$"):
        bootstrap_ci([1.0, 0.0, 1.0], clusters=["a", "b"])
    with pytest.raises(ValueError, match=r"^2 values but 1 cluster ids$"):
        bootstrap_ci([1.0, 1.0], clusters=["a"])
    with pytest.raises(ValueError, match=r"^0 values but 1 cluster ids$"):
        bootstrap_ci([], clusters=["a"])


@pytest.mark.parametrize(
    ("k", "n", "p"),
    [
        (0, 1, 1.0),  # 2 * 1/2, capped
        (1, 10, 2 * (1 + 10) / 1024),
        (9, 10, 2 * (1 + 10) / 1024),  # the smaller tail is the upper one
        (4, 5, 2 * (1 + 5) / 32),
        (2, 5, 1.0),  # 2 * (1 + 5 + 10) / 32 = 1
        (2, 7, 2 * (1 + 7 + 21) / 128),
    ],
)
def test_the_sign_test_doubles_the_smaller_tail(k: int, n: int, p: float) -> None:
    assert binomial_two_sided(k, n) == pytest.approx(p)


def test_mcnemar_counts_each_kind_of_pair_and_tests_the_discordant_ones() -> None:
    # pairs: (T,T) x2, (T,F) x3, (F,T) x1, (F,F) x4 -> p = binomial_two_sided(3, 4) = 2 * 5/16
    a = [True, True, True, True, True, False, False, False, False, False]
    b = [True, True, False, False, False, True, False, False, False, False]
    t = mcnemar_exact(a, b)
    assert (t.both, t.only_a, t.only_b, t.neither, t.n) == (2, 3, 1, 4, 10)
    assert t.p_value == pytest.approx(10 / 16)
    with pytest.raises(ValueError, match=r"^paired samples differ in length: 2 vs 3$"):
        mcnemar_exact([True, False], [True, False, True])


def test_pass_at_k_at_the_boundary_of_certain_success() -> None:
    """With exactly k failures a draw of k can still miss: 1 - C(k, k) / C(n, k)."""
    assert pass_at_k(5, 3, 2) == pytest.approx(1 - 1 / 10)
    assert pass_at_k(5, 3, 3) == 1.0  # fewer failures (2) than draws (3)
    assert pass_at_k(1, 1, 1) == 1.0 and pass_at_k(1, 0, 1) == 0.0
    assert pass_hat_k(5, 3, 3) == pytest.approx(1 / 10) and pass_hat_k(1, 0, 1) == 0.0


@pytest.mark.parametrize(
    ("n", "c", "k", "message"),
    [
        (3, -1, 1, "need 0 <= c <= n, got c=-1, n=3"),
        (3, 4, 1, "need 0 <= c <= n, got c=4, n=3"),
        (3, 1, 0, "need 1 <= k <= n, got k=0, n=3"),
        (3, 1, 4, "need 1 <= k <= n, got k=4, n=3"),
    ],
)
def test_impossible_counts_are_refused_with_what_was_given(
    n: int, c: int, k: int, message: str
) -> None:
    for f in (pass_at_k, pass_hat_k):
        with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
            f(n, c, k)


def test_the_extreme_counts_are_accepted() -> None:
    """c = 0, c = n, k = 1 and k = n are all valid."""
    assert pass_at_k(3, 0, 1) == 0.0 and pass_at_k(3, 3, 3) == 1.0
    assert pass_hat_k(3, 3, 1) == 1.0 and pass_hat_k(3, 0, 3) == 0.0
    assert mean_pass_at_k([(3, 1), (2, 2)], 1) == pytest.approx((1 / 3 + 1) / 2)
    assert mean_pass_hat_k([(3, 1), (2, 2)], 1) == pytest.approx((1 / 3 + 1) / 2)
