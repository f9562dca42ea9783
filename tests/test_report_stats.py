"""Reliability statistics with answers worked out by hand (and against scipy where it has one)."""

from __future__ import annotations

import random

import pytest

from cworld.report.stats import (
    average_ranks,
    bootstrap_mean,
    flip_share,
    mean_over_tasks,
    pass_at_k,
    pass_hat_k,
    spearman,
)


def test_pass_at_k_and_pass_hat_k_by_hand():
    # 4 attempts, 2 successes: pass@1 = 1/2; pass@2 = 1 - C(2,2)/C(4,2) = 5/6; pass^2 = C(2,2)/C(4,2) = 1/6
    assert pass_at_k(4, 2, 1) == pytest.approx(0.5)
    assert pass_at_k(4, 2, 2) == pytest.approx(5 / 6)
    assert pass_hat_k(4, 2, 2) == pytest.approx(1 / 6)
    assert pass_at_k(3, 0, 3) == 0.0 and pass_hat_k(3, 3, 3) == 1.0
    assert pass_at_k(3, 1, 3) == 1.0 and pass_hat_k(3, 1, 3) == 0.0
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_pass_k_over_tasks_and_flip_share():
    outcomes = {"a": [True, True, True], "b": [True, False, False], "c": [False, False, False]}
    assert mean_over_tasks(outcomes, 3, "pass@k") == pytest.approx(2 / 3)
    assert mean_over_tasks(outcomes, 3, "pass^k") == pytest.approx(1 / 3)
    assert mean_over_tasks(outcomes, 1, "pass@k") == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert flip_share(outcomes) == pytest.approx(1 / 3)
    assert flip_share({"a": [True]}) is None


def test_bootstrap_interval_contains_the_mean_and_is_deterministic():
    values = [float(v) for v in [1, 0, 1, 1, 0, 1, 1, 1, 0, 1]]
    tasks = [f"t{i // 2}" for i in range(10)]
    first = bootstrap_mean(values, tasks, purpose="x")
    again = bootstrap_mean(values, tasks, purpose="x")
    assert first == again
    assert first.mean == pytest.approx(0.7) and first.n == 10
    assert first.low is not None and first.high is not None
    assert 0.0 <= first.low < 0.7 < first.high <= 1.0


def test_bootstrap_of_a_constant_has_a_zero_width_interval_and_one_value_none():
    est = bootstrap_mean([0.5, 0.5, 0.5], ["a", "b", "c"])
    assert (est.mean, est.low, est.high) == (0.5, 0.5, 0.5)
    single = bootstrap_mean([0.3])
    assert single.mean == 0.3 and not single.has_ci
    assert bootstrap_mean([]).mean is None


def test_cluster_bootstrap_is_wider_than_pretending_repeats_are_independent():
    # two tasks, each run 20 times: one always passes, one always fails
    values = [1.0] * 20 + [0.0] * 20
    tasks = ["easy"] * 20 + ["hard"] * 20
    clustered = bootstrap_mean(values, tasks)
    naive = bootstrap_mean(values)
    assert clustered.high - clustered.low > naive.high - naive.low


def test_spearman_matches_scipy_including_ties():
    from scipy.stats import spearmanr

    rng = random.Random(7)
    for _ in range(50):
        n = rng.randint(3, 25)
        a = [rng.randint(0, 4) for _ in range(n)]
        b = [rng.randint(0, 4) for _ in range(n)]
        mine = spearman(a, b)
        if mine is not None:
            assert mine == pytest.approx(spearmanr(a, b).statistic)
    assert spearman([1, 2], [2, 1]) is None and spearman([1, 1, 1], [1, 2, 3]) is None
    assert spearman([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert list(average_ranks([5, 1, 5, 3])) == [3.5, 1.0, 3.5, 2.0]


def test_interval_does_not_depend_on_the_order_episodes_finished() -> None:
    values = [8.85, 8.44, 8.33, 7.9, 9.1, 6.2, 8.0, 7.75, 8.6, 9.0]
    tasks = [f"t{i % 7}" for i in range(len(values))]
    order = [3, 9, 0, 7, 1, 8, 2, 6, 4, 5]
    shuffled_values = [values[i] for i in order]
    shuffled_tasks = [tasks[i] for i in order]
    assert bootstrap_mean(values, tasks, purpose="x") == bootstrap_mean(shuffled_values, shuffled_tasks, purpose="x")
    assert bootstrap_mean(values, purpose="x") == bootstrap_mean(shuffled_values, purpose="x")
