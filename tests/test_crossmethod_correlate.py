"""Rank correlations between methods against scipy, and their bootstrap against a slow loop."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from weatkit.errors import WeatkitError
from weatkit.stats.correlation import (
    CORRELATION_COLUMNS,
    correlate_pair,
    correlation_table,
    kendall_rows,
    spearman_rows,
)


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
