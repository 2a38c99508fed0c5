"""Rank correlations between methods against scipy, and their bootstrap against a slow loop;
permutation p-values against a brute-force enumeration of every pairing."""

from __future__ import annotations

from itertools import permutations
from math import factorial

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from weatkit.errors import WeatkitError
from weatkit.stats.correlation import (
    CORRELATION_COLUMNS,
    correlate_pair,
    correlation_table,
    is_significant,
    kendall_rows,
    min_units,
    pearson_rows,
    permutation_p,
    spearman_rows,
)

SCIPY = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}


def _data(seed: int, n: int = 9) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    x[2] = x[5]  # ties in both
    y[1] = y[7]
    return x, y


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_vectorised_statistics_equal_scipy(seed: int) -> None:
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, size=(6, 8)).astype(float)  # many ties
    y = x + rng.integers(0, 3, size=(6, 8))
    rho = spearman_rows(x, y)
    tau = kendall_rows(x, y)
    for b in range(6):
        assert rho[b] == pytest.approx(stats.spearmanr(x[b], y[b]).statistic, abs=1e-12)
        assert tau[b] == pytest.approx(stats.kendalltau(x[b], y[b]).statistic, abs=1e-12)


def test_constant_rows_are_nan() -> None:
    x = np.array([[1.0, 1.0, 1.0], [1.0, 2.0, 3.0]])
    y = np.array([[3.0, 1.0, 2.0], [3.0, 3.0, 3.0]])
    assert np.isnan(spearman_rows(x, y)).all()
    assert np.isnan(kendall_rows(x, y)).all()


def test_bootstrap_interval_equals_a_slow_loop() -> None:
    x, y = _data(3)
    got = correlate_pair(x, y, n_bootstrap=300, seed=11, confidence_level=0.9)
    rows = np.random.default_rng(11).integers(0, len(x), size=(300, len(x)))
    rho, tau = [], []
    for idx in rows:
        xs, ys = x[idx], y[idx]
        if np.ptp(xs) == 0 or np.ptp(ys) == 0:
            continue
        rho.append(stats.spearmanr(xs, ys).statistic)
        tau.append(stats.kendalltau(xs, ys).statistic)
    assert got["n_degenerate"] == 300 - len(rho)
    assert got["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert got["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert got["spearman_ci_low"] == pytest.approx(np.quantile(rho, 0.05), abs=1e-12)
    assert got["spearman_ci_high"] == pytest.approx(np.quantile(rho, 0.95), abs=1e-12)
    assert got["kendall_ci_low"] == pytest.approx(np.quantile(tau, 0.05), abs=1e-12)
    assert got["kendall_ci_high"] == pytest.approx(np.quantile(tau, 0.95), abs=1e-12)


def test_perfect_agreement_and_reversal() -> None:
    x = np.arange(6.0)
    same = correlate_pair(x, x**3, n_bootstrap=50, seed=0, confidence_level=0.95)
    assert same["spearman"] == same["kendall"] == pytest.approx(1.0)
    assert same["spearman_ci_low"] == pytest.approx(1.0)
    reverse = correlate_pair(x, -x, n_bootstrap=0, seed=0, confidence_level=0.95)
    assert reverse["spearman"] == reverse["kendall"] == pytest.approx(-1.0)
    assert np.isnan(reverse["spearman_ci_low"])


def test_table_scopes_and_missing_values() -> None:
    x, y = _data(5, n=8)
    wide = pd.DataFrame(
        {
            "model": [f"m{i % 4}" for i in range(8)],
            "lang": ["en"] * 4 + ["de"] * 4,
            "a": x,
            "b": y,
            "c": [1.0, 2.0, np.nan, 4.0, np.nan, np.nan, np.nan, 3.0],
        }
    )
    table = correlation_table(wide, ["a", "b", "c"], n_bootstrap=100, seed=1)
    assert list(table.columns) == CORRELATION_COLUMNS
    pairs = set(zip(table["scope"], table["measure_x"], table["measure_y"], strict=True))
    # a-b everywhere; c has 4 units overall (3 in en, 1 in de): in "all" and "en" only
    assert pairs == {
        ("all", "a", "b"),
        ("de", "a", "b"),
        ("en", "a", "b"),
        ("all", "a", "c"),
        ("all", "b", "c"),
        ("en", "a", "c"),
        ("en", "b", "c"),
    }
    row = table[
        (table["scope"] == "all") & (table["measure_x"] == "a") & (table["measure_y"] == "c")
    ]
    keep = wide["c"].notna()
    assert row["n"].iloc[0] == 4
    expected = stats.spearmanr(wide.loc[keep, "a"], wide.loc[keep, "c"]).statistic
    assert row["spearman"].iloc[0] == pytest.approx(expected)
    de = table[(table["scope"] == "de") & (table["measure_x"] == "a")]
    assert de["spearman"].iloc[0] == pytest.approx(stats.spearmanr(x[4:], y[4:]).statistic)
    one_language = correlation_table(wide[wide["lang"] == "en"], ["a", "b"], n_bootstrap=0)
    assert list(one_language["scope"]) == ["all"]


def test_bad_settings() -> None:
    wide = pd.DataFrame({"model": ["a"], "lang": ["en"], "x": [1.0]})
    with pytest.raises(WeatkitError, match="bootstrap"):
        correlation_table(wide, ["x"], n_bootstrap=-1)
    with pytest.raises(WeatkitError, match="confidence level"):
        correlation_table(wide, ["x"], confidence_level=1.5)


def _brute_force_p(x: np.ndarray, y: np.ndarray, statistic: str) -> float:
    """Two-sided p = min(1, 2 min(P(T ≤ t), P(T ≥ t))) over all n! orders of x, with scipy's T."""
    function = SCIPY[statistic]
    observed = function(x, y).statistic
    null = np.array([function(x[list(p)], y).statistic for p in permutations(range(len(x)))])
    tol = 1e-9
    return min(1.0, 2 * min(np.mean(null <= observed + tol), np.mean(null >= observed - tol)))


@pytest.mark.parametrize("statistic", ["pearson", "spearman", "kendall"])
@pytest.mark.parametrize("n", [3, 4, 5, 6])
def test_exact_p_equals_brute_force_enumeration(statistic: str, n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.normal(size=n)
    y = x + rng.normal(size=n)
    if n >= 5:
        x[0] = x[1]  # ties
        y[2] = y[3]
    p, method, n_permutations = permutation_p(x, y, statistic, seed=0)
    assert (method, n_permutations) == ("exact", factorial(n))
    assert p == pytest.approx(_brute_force_p(x, y, statistic), abs=1e-12)


def test_monte_carlo_p_beyond_eight_units_is_seeded_and_near_the_exact_p() -> None:
    n = 9
    rng = np.random.default_rng(4)
    x = rng.normal(size=n)
    y = 0.4 * x + rng.normal(size=n)
    p, method, n_permutations = permutation_p(x, y, "spearman", seed=3)
    assert (method, n_permutations) == ("monte-carlo", 9999)
    assert permutation_p(x, y, "spearman", seed=3)[0] == p
    # exact p over all 9! orders: rho = 1 - 6 Σd² / (n(n² - 1)) on untied ranks
    rx = stats.rankdata(x).astype(int) - 1
    ry = stats.rankdata(y)
    orders = np.array(list(permutations(range(n))))
    null = 1 - 6 * ((rx[orders] + 1 - ry) ** 2).sum(axis=1) / (n * (n * n - 1))
    t = stats.spearmanr(x, y).statistic
    exact = 2 * min(np.mean(null <= t + 1e-9), np.mean(null >= t - 1e-9))
    assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / 9999) + 1e-4


def test_fewest_units_that_can_reach_alpha() -> None:
    assert (min_units(0.9), min_units(0.95), min_units(0.99)) == (4, 5, 6)
    for level in (0.9, 0.95, 0.99):
        n_min = min_units(level)
        below = np.arange(float(n_min - 1))
        at = np.arange(float(n_min))
        assert permutation_p(below, below**2, "spearman")[0] > 1 - level
        assert permutation_p(at, at**2, "spearman")[0] <= 1 - level
        assert permutation_p(at, at**2, "spearman")[0] == pytest.approx(2 / factorial(n_min))


def test_three_units_are_flagged_and_never_starred() -> None:
    x, y = np.array([1.0, 2.0, 3.0]), np.array([2.0, 5.0, 9.0])
    assert stats.spearmanr(x, y).pvalue == 0  # the asymptotic p this replaces
    got = correlate_pair(x, y, n_bootstrap=500, seed=0, confidence_level=0.95)
    assert got["spearman_p"] == got["kendall_p"] == pytest.approx(2 / 6)
    assert got["spearman_ci_low"] == got["spearman_ci_high"] == 1.0  # degenerate
    assert got["n_min"] == 5
    assert "n=3 < 5" in got["flag"] and "degenerate CI" in got["flag"]
    interval = (got["spearman_ci_low"], got["spearman_ci_high"])
    assert not is_significant(got["spearman_p"], got["flag"], 0.95, interval)
    # enough units but a perfect order: the interval is still degenerate, the p is exact
    six = correlate_pair(np.arange(6.0), np.arange(6.0) ** 3, n_bootstrap=500, seed=0,
                         confidence_level=0.95)  # fmt: skip
    assert "n=" not in six["flag"] and "degenerate CI of Spearman ρ, Kendall τ_b" in six["flag"]
    assert six["spearman_p"] == pytest.approx(2 / 720)


def test_what_may_be_starred() -> None:
    assert is_significant(0.01, "", 0.95, (0.1, 0.5))
    assert is_significant(0.05, "", 0.95, (-0.5, -0.1))
    assert not is_significant(0.01, "", 0.95, (-0.1, 0.5))
    assert not is_significant(0.01, "n=4 < 5: ...", 0.95, (0.1, 0.5))
    assert not is_significant(0.01, "", 0.95, (1.0, 1.0))
    assert not is_significant(0.01, "", 0.95, (float("nan"), float("nan")))
    assert not is_significant(0.06, "", 0.95, (0.1, 0.5))  # the interval alone is not enough
    assert is_significant(0.06, "", 0.9, (0.1, 0.5))
    assert not is_significant(float("nan"), "", 0.95, (0.1, 0.5))
    # a table without intervals (isomorphism): p and the flag decide; NaN flag as read from CSV
    assert is_significant(0.01, float("nan"), 0.95)
    assert not is_significant(0.01, "n=4 < 5: ...", 0.95)
    x, y = _data(8, n=12)
    row = correlate_pair(x, y + 3 * x, n_bootstrap=400, seed=0, confidence_level=0.95)
    assert row["flag"] == "" and row["spearman_ci_low"] > 0 and row["spearman_p"] < 0.05
    interval = (row["spearman_ci_low"], row["spearman_ci_high"])
    assert is_significant(row["spearman_p"], row["flag"], 0.95, interval)


#: 6 units with ties whose percentile bootstrap interval excludes 0 while the exact p is 0.1.
TIED_X = np.array([2.0, 1.0, 1.0, 0.0, 0.0, 0.0])
TIED_Y = np.array([0.0, 0.0, 0.0, 3.0, 2.0, 3.0])


def test_an_interval_that_excludes_zero_with_p_above_alpha_is_flagged_not_starred() -> None:
    got = correlate_pair(TIED_X, TIED_Y, n_bootstrap=1000, seed=0, confidence_level=0.95)
    assert got["n"] == 6 >= got["n_min"]
    for name in ("spearman", "kendall"):
        assert got[f"{name}_ci_high"] < 0  # the interval excludes 0 ...
        p = _brute_force_p(TIED_X, TIED_Y, name)
        assert got[f"{name}_p"] == pytest.approx(p, abs=1e-12) and p == pytest.approx(0.1)
        interval = (got[f"{name}_ci_low"], got[f"{name}_ci_high"])
        assert not is_significant(got[f"{name}_p"], got["flag"], 0.95, interval)
    assert got["flag"] == (
        "CI of Spearman ρ, Kendall τ_b excludes 0 but permutation p = 0.100, 0.100 > 0.05 (the "
        "percentile bootstrap is too narrow with few units or ties)"
    )
    # at 90% the same p is below α: no flag, and the star is earned
    at90 = correlate_pair(TIED_X, TIED_Y, n_bootstrap=1000, seed=0, confidence_level=0.9)
    assert at90["flag"] == ""
    interval = (at90["spearman_ci_low"], at90["spearman_ci_high"])
    assert is_significant(at90["spearman_p"], at90["flag"], 0.9, interval)


def test_compare_prints_no_star_where_p_is_above_alpha() -> None:
    from io import StringIO

    from rich.console import Console

    from weatkit.cli.compare import print_compare
    from weatkit.crossmethod.runner import CompareResult

    wide = pd.DataFrame({"model": list("abcdef"), "lang": "en", "m1": TIED_X, "m2": TIED_Y})
    corr = correlation_table(wide, ["m1", "m2"], n_bootstrap=1000)
    result = CompareResult(
        scores=pd.DataFrame(),
        table=wide,
        correlations=corr,
        skipped=pd.DataFrame(),
        manifest={"correlation": {"confidence_level": 0.95}},
    )
    console = Console(width=120, file=StringIO(), record=True)
    print_compare(result, console)
    text = console.export_text()
    assert "-0.900*" not in text and "-0.900" in text and "0.100" in text
    assert "§" in text and "excludes 0 but p > 0.05" in text


def test_pearson_rows_equal_scipy() -> None:
    x, y = _data(6)
    assert pearson_rows(x[None], y[None])[0] == pytest.approx(stats.pearsonr(x, y).statistic)
    assert np.isnan(pearson_rows(np.ones((1, 4)) * 1e-9, y[None, :4])[0])
