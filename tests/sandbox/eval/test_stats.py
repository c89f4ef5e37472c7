from __future__ import annotations

import math
import random

import pytest

from sandbox.eval.stats import (
    Interval,
    binomial_two_sided,
    bootstrap_ci,
    bootstrap_columns,
    mcnemar_exact,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    population_std,
    seeded_rng,
    trial_ks,
)


def test_mcnemar_on_a_known_table() -> None:
    # 2x2 table: both 10, only A 7, only B 1, neither 2. Exact two-sided p = 2 * P(X <= 1),
    # X ~ Bin(8, 1/2) = 2 * (1 + 8) / 256 = 0.0703125.
    a = [True] * 10 + [True] * 7 + [False] * 1 + [False] * 2
    b = [True] * 10 + [False] * 7 + [True] * 1 + [False] * 2
    t = mcnemar_exact(a, b)
    assert (t.both, t.only_a, t.only_b, t.neither) == (10, 7, 1, 2)
    assert t.p_value == pytest.approx(18 / 256)


def test_sign_test_edge_cases() -> None:
    assert binomial_two_sided(0, 0) == 1.0
    assert binomial_two_sided(3, 6) == 1.0  # perfectly balanced, capped at 1
    assert binomial_two_sided(0, 5) == pytest.approx(2 / 32)
    assert binomial_two_sided(5, 5) == pytest.approx(2 / 32)
    with pytest.raises(ValueError):
        mcnemar_exact([True], [True, False])


def test_pass_at_k_and_pass_hat_k_on_known_counts() -> None:
    # n=5 trials, c=2 correct.
    assert pass_at_k(5, 2, 1) == pytest.approx(2 / 5)
    assert pass_at_k(5, 2, 2) == pytest.approx(1 - math.comb(3, 2) / math.comb(5, 2))  # 0.7
    assert pass_at_k(5, 2, 4) == 1.0  # fewer than k failures: some draw must be correct
    assert pass_hat_k(5, 2, 1) == pytest.approx(2 / 5)
    assert pass_hat_k(5, 2, 2) == pytest.approx(1 / 10)
    assert pass_hat_k(5, 2, 3) == 0.0
    assert pass_hat_k(4, 4, 4) == 1.0
    assert pass_at_k(4, 0, 4) == 0.0
    # averaged per task
    assert mean_pass_at_k([(5, 2), (5, 5)], 2) == pytest.approx((0.7 + 1.0) / 2)
    assert mean_pass_hat_k([(5, 2), (5, 5)], 2) == pytest.approx((0.1 + 1.0) / 2)
    with pytest.raises(ValueError):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError):
        pass_hat_k(3, 1, 4)


def test_bootstrap_is_seeded_and_degenerate_cases() -> None:
    values = [1.0, 0.0, 0.5, 1.0, 1.0, 0.0]
    assert bootstrap_ci(values, seed=3) == bootstrap_ci(values, seed=3)
    ci = bootstrap_ci(values, seed=3)
    assert ci.low < ci.value < ci.high and ci.n == 6
    assert bootstrap_ci([]).n == 0
    const = bootstrap_ci([1.0] * 5)
    assert (const.low, const.value, const.high) == (1.0, 1.0, 1.0)


def test_bootstrap_interval_covers_the_true_rate_at_about_the_nominal_rate() -> None:
    rng = random.Random(12345)
    true_rate, n, sims = 0.6, 60, 200
    covered = 0
    for i in range(sims):
        sample = [1.0 if rng.random() < true_rate else 0.0 for _ in range(n)]
        ci = bootstrap_ci(sample, resamples=400, seed=i)
        covered += ci.low <= true_rate <= ci.high
    coverage = covered / sims
    # nominal 0.95; the percentile bootstrap runs a little under it at n=60.
    assert 0.88 <= coverage <= 0.99, coverage


def test_trials_of_one_task_are_resampled_together() -> None:
    # 10 tasks x 5 trials, every trial of a task alike: 10 independent units, not 50. An
    # episode-level bootstrap treats the 50 as independent and gives a far narrower interval.
    values = [float(t % 2) for t in range(10) for _ in range(5)]
    tasks = [t for t in range(10) for _ in range(5)]
    by_episode = bootstrap_ci(values, seed=1)
    by_task = bootstrap_ci(values, seed=1, clusters=tasks)
    assert by_task.value == by_episode.value == 0.5 and by_task.n == 50
    width = lambda iv: iv.high - iv.low  # noqa: E731
    assert width(by_task) > 1.8 * width(by_episode)
    # the same interval as 10 single-trial tasks: the clusters carry the information
    one_each = bootstrap_ci([float(t % 2) for t in range(10)], seed=1)
    assert (by_task.low, by_task.high) == (one_each.low, one_each.high)
    # one value per cluster is the plain bootstrap, draw for draw
    plain = [1.0, 0.0, 0.5, 1.0, 0.0]
    assert bootstrap_ci(plain, seed=4, clusters=list("abcde")) == bootstrap_ci(plain, seed=4)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 0.0], clusters=["a"])


def test_population_std_and_seeded_rng() -> None:
    assert population_std([0.5, 0.75]) == pytest.approx(0.125)  # numpy.std, ddof 0
    assert population_std([1.0]) == 0.0
    assert seeded_rng(3, "t1", 0).random() == seeded_rng(3, "t1", 0).random()
    assert seeded_rng(3, "t1", 0).random() != seeded_rng(3, "t1", 1).random()


def test_trial_ks_go_up_to_the_fewest_trials_of_any_task_from_two() -> None:
    assert trial_ks([]) == []
    assert trial_ks([(1, 1), (5, 2)]) == []  # one trial of a task says nothing of k
    assert trial_ks([(2, 1), (3, 0)]) == [1, 2]
    assert trial_ks([(4, 4), (3, 1), (5, 0)]) == [1, 2, 3]


def test_bootstrap_columns_is_bootstrap_ci_for_each_mean_drawn_together() -> None:
    rng = random.Random(5)
    values, clusters, groups = [], [], []
    for task in range(40):
        n = rng.randint(1, 4)
        outcomes = [float(rng.random() < 0.4) for _ in range(n)]
        values += outcomes
        clusters += [task] * n
        per_task = float(rng.random() < 0.6)
        groups.append([(math.fsum(outcomes), n), (per_task, 1), (0.25, 1)])
    for level, seed in ((0.95, 0), (0.9, 11)):
        rate, per_task_mean, constant = bootstrap_columns(groups, level=level, seed=seed)
        assert rate == bootstrap_ci(values, level=level, seed=seed, clusters=clusters)
        plain = [g[1][0] for g in groups]
        assert per_task_mean == bootstrap_ci(plain, level=level, seed=seed)
        assert rate.low < rate.value < rate.high and rate.n == len(values)
        assert per_task_mean.n == 40 and per_task_mean.level == level
        assert constant == Interval(value=0.25, low=0.25, high=0.25, n=40, level=level)
    fewer = bootstrap_columns(groups, resamples=50, seed=0)[0]
    assert fewer == bootstrap_ci(values, resamples=50, seed=0, clusters=clusters)
    assert bootstrap_columns([]) == []
    alike = [[(1.0, 2)], [(2.0, 4)], [(0.5, 1)]]  # every cluster at the same ratio
    assert bootstrap_columns(alike) == [Interval(value=0.5, low=0.5, high=0.5, n=7)]
    # the same ratio everywhere is a point, not the float noise of resampled sums
    # (0.1 * 3 / 3 is 0.10000000000000002)
    tenths = [[(0.1, 1)], [(0.2, 2)], [(0.1, 1)], [(0.4, 4)]]
    assert bootstrap_columns(tenths) == [Interval(value=0.1, low=0.1, high=0.1, n=8)]
