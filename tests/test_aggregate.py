"""CA-WEAT median and order-statistic CI against a hand computation with exact binomials."""

from __future__ import annotations

import math

import numpy as np
import pytest

from weatkit.errors import WeatkitError
from weatkit.stats.aggregate import _binom_cdf, median_ci


def coverage(n: int, j: int) -> float:
    """P(x_(j) <= median <= x_(n-j+1)) = 1 - 2 P(K <= j-1), K ~ Bin(n, 1/2), by counting."""
    return 1 - 2 * sum(math.comb(n, k) for k in range(j)) / 2**n


@pytest.mark.parametrize("n", [6, 7, 10, 12, 24, 40])
def test_ranks_are_the_tightest_with_95_percent_coverage(n: int) -> None:
    values = np.random.default_rng(n).normal(size=n)
    res = median_ci(values)
    best = max(j for j in range(1, n // 2 + 1) if coverage(n, j) >= 0.95)
    s = np.sort(values)
    assert (res.rank_low, res.rank_high) == (best, n - best + 1)
    assert (res.low, res.high) == (s[best - 1], s[n - best])
    assert res.confidence_level == pytest.approx(coverage(n, best), abs=1e-12)
    assert res.median == pytest.approx(np.median(values))


def test_hand_worked_24_lists() -> None:
    # n = 24: P(K <= 6) = 0.01133, P(K <= 7) = 0.03196 -> j = 7, interval [x_(7), x_(18)]
    res = median_ci(np.arange(1.0, 25.0))
    assert (res.low, res.high, res.median) == (7.0, 18.0, 12.5)
    assert res.confidence_level == pytest.approx(0.97734, abs=1e-5)


@pytest.mark.parametrize(("n", "level"), [(1, 0.0), (2, 0.5), (3, 0.75), (5, 0.9375)])
def test_too_few_lists_report_min_max_with_true_coverage(n: int, level: float) -> None:
    res = median_ci(list(range(n)))
    assert (res.low, res.high) == (0, n - 1)
    assert res.confidence_level == pytest.approx(level)


def test_empty_is_an_error() -> None:
    with pytest.raises(WeatkitError):
        median_ci([])


def test_the_binomial_cdf_is_scipy_stats_bit_for_bit() -> None:
    """The coverage comes from scipy.stats.binom.cdf's own function (no scipy.stats import)."""
    from scipy.stats import binom

    for n in range(1, 301):
        k = np.arange(n)
        np.testing.assert_array_equal(_binom_cdf(k, n, 0.5), binom.cdf(k, n, 0.5))
        j = median_ci(np.arange(float(n))).rank_low
        assert median_ci(np.arange(float(n))).confidence_level == max(
            0.0, 1.0 - 2.0 * float(binom.cdf(j - 1, n, 0.5))
        )
