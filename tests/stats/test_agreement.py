"""Agreement statistics equal their oracles: scipy's Pearson and Kendall tau-b, and direct
implementations of pairwise accuracy (Kocmi et al. 2021) and acc_eq (Deutsch et al. 2023)
written here from the papers' definitions."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr

from warehouse.stats.agreement import (
    acc_eq,
    kendall_tau_b,
    kendall_tau_b_rows,
    pairwise_accuracy,
    pairwise_accuracy_rows,
    pearson,
    pearson_rows,
    tie_calibrated_acc_eq,
)


def _sign(x: float) -> int:
    return int(x > 0) - int(x < 0)


def _direct_pairwise_accuracy(metric, human) -> float:
    pairs = list(itertools.combinations(range(len(metric)), 2))
    right = sum(_sign(metric[i] - metric[j]) == _sign(human[i] - human[j]) for i, j in pairs)
    return right / len(pairs)


def _direct_acc_eq(metric, human, groups, epsilon) -> float:
    right = total = 0
    for g in set(groups):
        members = [i for i, x in enumerate(groups) if x == g]
        for i, j in itertools.combinations(members, 2):
            dm = metric[i] - metric[j]
            m = 0 if abs(dm) <= epsilon else _sign(dm)
            right += m == _sign(human[i] - human[j])
            total += 1
    return right / total


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("n", [2, 3, 14, 200, 3000])
def test_pearson_and_kendall_equal_scipy_with_and_without_ties(seed, n):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 6, n).astype(float) if seed % 2 else rng.normal(size=n)
    y = x + rng.integers(-2, 3, n) if seed % 3 else rng.normal(size=n)
    expected = kendalltau(x, y, variant="b").statistic
    got = kendall_tau_b(x, y)
    assert (math.isnan(got) and math.isnan(expected)) or got == pytest.approx(expected, abs=1e-12)
    if n > 2 and np.std(x) > 0 and np.std(y) > 0:
        assert pearson(x, y) == pytest.approx(pearsonr(x, y).statistic, abs=1e-12)


@pytest.mark.parametrize("n", [1, 2, 3, 12, 40])
def test_the_row_versions_equal_the_statistics_row_by_row(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 4, (300, n)).astype(float)  # many ties, some constant rows
    y = np.where(rng.random((300, n)) < 0.5, x, rng.normal(size=(300, n)))
    x[0], y[1] = 7.0, 3.0  # a constant side in the first two rows
    for rows, one, exact in (
        (kendall_tau_b_rows, kendall_tau_b, True),
        (pairwise_accuracy_rows, pairwise_accuracy, True),
        (pearson_rows, pearson, False),
    ):
        got, expected = rows(x, y), np.array([one(a, b) for a, b in zip(x, y, strict=True)])
        assert got.shape == (300,)
        assert np.array_equal(np.isnan(got), np.isnan(expected)), rows.__name__
        finite = ~np.isnan(expected)
        if exact:  # counts of pairs: the same integers, divided the same way
            assert np.array_equal(got[finite], expected[finite]), rows.__name__
        else:
            np.testing.assert_allclose(got[finite], expected[finite], rtol=0, atol=1e-12)


def test_constant_sides_give_nan_not_an_error():
    assert math.isnan(kendall_tau_b([1, 1, 1], [1, 2, 3]))
    assert math.isnan(pearson([1, 1, 1], [1, 2, 3]))
    assert math.isnan(kendall_tau_b([1], [2]))


@pytest.mark.parametrize("seed", range(5))
def test_pairwise_accuracy_equals_the_definition(seed):
    rng = np.random.default_rng(seed)
    metric = np.round(rng.normal(size=12), 1)
    human = np.round(metric + rng.normal(size=12), 0)
    assert pairwise_accuracy(metric, human) == pytest.approx(
        _direct_pairwise_accuracy(metric, human)
    )


@pytest.mark.parametrize("seed", range(5))
def test_acc_eq_equals_the_definition_and_tie_calibration_is_the_best_threshold(seed):
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(15), 6)
    metric = np.round(rng.normal(size=groups.size), 2)
    human = np.round(metric + rng.normal(size=groups.size), 0)  # many human ties
    for epsilon in (0.0, 0.1, 0.5):
        assert acc_eq(metric, human, groups, epsilon) == pytest.approx(
            _direct_acc_eq(metric, human, list(groups), epsilon)
        )
    best, epsilon = tie_calibrated_acc_eq(metric, human, groups)
    candidates = {0.0}
    for g in range(15):
        members = np.flatnonzero(groups == g)
        candidates |= {abs(metric[i] - metric[j]) for i, j in itertools.combinations(members, 2)}
    brute = max(_direct_acc_eq(metric, human, list(groups), e) for e in candidates)
    assert best == pytest.approx(brute)
    assert acc_eq(metric, human, groups, epsilon) == pytest.approx(best)
    smaller = [e for e in candidates if e < epsilon]
    assert all(_direct_acc_eq(metric, human, list(groups), e) < best - 1e-12 for e in smaller)


def test_pairs_are_formed_only_within_groups():
    metric, human = [1.0, 2.0, 3.0, 4.0], [2.0, 1.0, 3.0, 4.0]
    assert acc_eq(metric, human, [0, 0, 1, 1]) == 0.5  # (0,1) wrong, (2,3) right
    assert acc_eq(metric, human, [0, 1, 2, 3]) != acc_eq(metric, human, [0, 0, 1, 1])
    assert math.isnan(acc_eq(metric, human, [0, 1, 2, 3]))
