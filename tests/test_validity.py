"""``weatkit.validity``: each statistic against a hand computation.

Spearman–Brown and split-half reliability on small tables by hand (splits written out, Pearson's
r from ``numpy.corrcoef``, the bootstrap as a plain loop over the documented plan); the ICCs
against the published values of Shrout & Fleiss (1979, Table 2) and their F-based intervals
against the formulas written out here; the MTMM matrix by loops over pandas and scipy.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import weatkit
from weatkit.errors import ConfigError, DataError
from weatkit.stats.resampling import split_half_plan
from weatkit.validity import icc, mtmm, spearman_brown, split_half

X = np.array([[1, 2, 1, 2], [3, 3, 4, 4], [5, 6, 5, 7], [2, 2, 3, 1], [4, 2, 5, 3]], float)
#: Shrout & Fleiss (1979), Table 2: 6 targets rated by 4 judges.
SF = np.array([[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9], [6, 2, 4, 7]])


def _sb_mean(values: np.ndarray, halves: list[tuple[list[int], list[int]]]) -> float:
    """Mean over the splits of max(2r/(1+r), -1), r = Pearson of the half means (by hand)."""
    out = []
    for a, b in halves:
        r = np.corrcoef(values[:, a].mean(axis=1), values[:, b].mean(axis=1))[0, 1]
        out.append(max(2 * r / (1 + r), -1.0))
    return float(np.mean(out))


def test_spearman_brown_by_hand() -> None:
    assert spearman_brown(0.5) == pytest.approx(2 * 0.5 / 1.5)
    assert spearman_brown(0.5, 3) == pytest.approx(0.75)  # 3·0.5 / (1 + 2·0.5)
    assert spearman_brown(0.2, 10) == pytest.approx(2.0 / 2.8)
    assert spearman_brown(1.0, 7) == pytest.approx(1.0)
    np.testing.assert_allclose(spearman_brown(np.array([0.0, 0.6])), [0.0, 0.75])
    with pytest.raises(DataError, match=r"a correlation lies in \[-1, 1\], got 1.5"):
        spearman_brown(1.5)
    with pytest.raises(ConfigError, match="k: must be > 0, got 0"):
        spearman_brown(0.5, 0)


def test_split_half_of_four_forms_averages_the_three_splits() -> None:
    halves = [([0, 1], [2, 3]), ([0, 2], [1, 3]), ([0, 3], [1, 2])]
    result = split_half(X, n_bootstrap=0)
    assert result.statistic == pytest.approx(_sb_mean(X, halves))
    assert (result.n_units, result.n_forms, result.n_splits, result.exact) == (5, 4, 3, True)
    assert np.isnan(result.confidence_interval).all()


def test_split_half_of_three_forms_has_unequal_halves() -> None:
    halves = [([0], [1, 2]), ([1], [0, 2]), ([2], [0, 1])]
    assert split_half(X[:, :3], n_bootstrap=0).statistic == pytest.approx(_sb_mean(X, halves))


def test_split_half_interval_is_a_percentile_bootstrap_over_units() -> None:
    halves = [([0, 1], [2, 3]), ([0, 2], [1, 3]), ([0, 3], [1, 2])]
    result = split_half(X, n_bootstrap=300, seed=4, confidence_level=0.9)
    rows = np.random.default_rng(4).integers(0, len(X), (300, len(X)))  # documented plan
    replicates = []
    with np.errstate(invalid="ignore", divide="ignore"):
        for row in rows:
            value = _sb_mean(X[row], halves)
            if np.isfinite(value):
                replicates.append(value)
    assert result.n_degenerate == 300 - len(replicates)
    np.testing.assert_allclose(result.confidence_interval, np.quantile(replicates, [0.05, 0.95]))


def test_random_splits_are_seeded() -> None:
    rng = np.random.default_rng(0)
    forms = rng.normal(size=(20, 1)) + rng.normal(size=(20, 24))
    plan = split_half_plan(24, 50, seed=7)
    base = np.array([1] * 12 + [0] * 12, dtype=np.uint8)  # half A: the first ⌊24/2⌋
    expected = np.random.default_rng([7, 24, 3]).permuted(np.tile(base, (50, 1)), axis=1)
    np.testing.assert_array_equal(plan, expected)
    halves = [(list(np.flatnonzero(p)), list(np.flatnonzero(1 - p))) for p in plan]
    first = split_half(forms, n_splits=50, n_bootstrap=100, seed=7)
    assert first.statistic == pytest.approx(_sb_mean(forms, halves))
    assert not first.exact
    assert first == split_half(forms, n_splits=50, n_bootstrap=100, seed=7)
    assert first.statistic != split_half(forms, n_splits=50, n_bootstrap=100, seed=8).statistic


def test_split_half_bad_input() -> None:
    with pytest.raises(DataError, match="split-half reliability needs at least 2 forms, got 1"):
        split_half(X[:, :1])
    with pytest.raises(DataError) as err:
        split_half(pd.DataFrame(X, columns=list("abcd")).assign(c=[1, np.nan, 2, 3, 4]))
    assert str(err.value) == (
        "split-half reliability: missing or infinite score of unit '1' in form 'c' (1 in all); "
        "every unit needs a score in every form"
    )
    forms = {
        "list1": pd.Series([1.0, 2.0, 3.0], index=["bert", "gpt2", "xlmr"]),
        "list2": pd.Series([1.0, 3.0], index=["bert", "gpt2"]),
    }
    with pytest.raises(DataError) as err:
        split_half(forms)
    assert str(err.value) == (
        "split-half reliability: mismatched units: form 'list2' has no score of unit 'xlmr', "
        "which form 'list1' scores"
    )
    with pytest.raises(ConfigError, match="n_splits: must be >= 1, got 0"):
        split_half(X, n_splits=0)


def test_icc_equals_shrout_and_fleiss_table_2() -> None:
    # Shrout & Fleiss (1979), Table 2 (p. 425): the six ICCs of their 6 × 4 example
    published = {"ICC1": 0.17, "ICC2": 0.29, "ICC3": 0.71, "ICC1k": 0.44, "ICC2k": 0.62,
                 "ICC3k": 0.91}  # fmt: skip
    results = icc(SF)
    assert {kind: round(r.statistic, 2) for kind, r in results.items()} == published


def test_icc_mean_squares_intervals_and_p_by_hand() -> None:
    from statsmodels.formula.api import ols
    from statsmodels.stats.anova import anova_lm

    n, k = SF.shape
    long = pd.DataFrame(
        [(i, j, SF[i, j]) for i in range(n) for j in range(k)], columns=["t", "r", "y"]
    )
    table = anova_lm(ols("y ~ C(t) + C(r)", long).fit())
    msr, msc, mse = table["mean_sq"].to_numpy()
    msw = (table["sum_sq"].iloc[1] + table["sum_sq"].iloc[2]) / (n * (k - 1))
    results = icc(SF, confidence_level=0.9)
    q = 0.95
    for model, error, df2 in ((1, msw, n * (k - 1)), (3, mse, (n - 1) * (k - 1))):
        f = msr / error
        fl = f / stats.f.ppf(q, n - 1, df2)
        fu = f * stats.f.ppf(q, df2, n - 1)
        single, average = results[f"ICC{model}"], results[f"ICC{model}k"]
        assert single.statistic == pytest.approx((msr - error) / (msr + (k - 1) * error))
        assert average.statistic == pytest.approx((msr - error) / msr)
        assert single.confidence_interval == pytest.approx(
            ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1))
        )
        assert average.confidence_interval == pytest.approx((1 - 1 / fl, 1 - 1 / fu))
        assert single.pvalue == pytest.approx(stats.f.sf(f, n - 1, df2))
        assert (single.f, single.df1, single.df2) == pytest.approx((f, n - 1, df2))
    rho = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    assert results["ICC2"].statistic == pytest.approx(rho)
    assert results["ICC2k"].statistic == pytest.approx((msr - mse) / (msr + (msc - mse) / n))
    # McGraw & Wong (1996), Table 7, case 2A, with Satterthwaite's df
    fj = msc / mse
    a = n * (1 + (k - 1) * rho) - k * rho
    v = (k - 1) * (n - 1) * (k * rho * fj + a) ** 2 / ((n - 1) * k**2 * rho**2 * fj**2 + a**2)
    f1, f2 = stats.f.ppf(q, n - 1, v), stats.f.ppf(q, v, n - 1)
    low = n * (msr - f1 * mse) / (f1 * (k * msc + (k * n - k - n) * mse) + n * msr)
    high = n * (f2 * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f2 * msr)
    assert results["ICC2"].confidence_interval == pytest.approx((low, high))
    assert results["ICC2k"].confidence_interval == pytest.approx(
        (k * low / (1 + (k - 1) * low), k * high / (1 + (k - 1) * high))
    )


def test_icc_95_percent_intervals_equal_r_psych() -> None:
    # R 4.2.2, psych 2.2.9 (Debian r-cran-psych), run on this data:
    #   r <- psych::ICC(sf, lmer = FALSE)
    #   sprintf("%.10f", r$results[, c("lower bound", "upper bound")])
    expected = {
        "ICC1": (-0.1329323249, 0.7225600623),
        "ICC2": (0.0187865134, 0.7610843696),
        "ICC3": (0.3424647650, 0.9458582600),
        "ICC1k": (-0.8844421552, 0.9124154203),
        "ICC2k": (0.0711368153, 0.9272320402),
        "ICC3k": (0.6756747138, 0.9858916782),
    }
    got = {kind: r.confidence_interval for kind, r in icc(SF).items()}
    assert set(got) == set(expected)
    for kind, interval in expected.items():
        assert got[kind] == pytest.approx(interval, abs=1e-9), kind


def test_icc_bad_input() -> None:
    with pytest.raises(DataError, match="the intraclass correlation needs at least 2 raters"):
        icc(SF[:, :1])
    with pytest.raises(DataError, match="the intraclass correlation needs at least 2 units"):
        icc(SF[:1])
    missing = r"missing or infinite score of unit '0' in rater '3' \(3 in all\)"
    with pytest.raises(DataError, match=missing):
        icc(np.where(SF == 8, np.nan, SF))


MEASURES = {
    "weat:gender": ("gender", "weat"),
    "weat:race": ("race", "weat"),
    "crows:gender": ("gender", "crows"),
    "crows:race": ("race", "crows"),
    "gest:gender": ("gender", "gest"),
    "weat:gender@0": ("gender", "weat"),
}


def _scores(n: int = 9, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    trait = {t: rng.normal(size=n) for t in ("gender", "race")}
    method = {m: rng.normal(size=n) for m in ("weat", "crows", "gest")}
    frame = pd.DataFrame(
        {c: trait[t] + 0.6 * method[m] + 0.4 * rng.normal(size=n) for c, (t, m) in MEASURES.items()}
    )
    frame.loc[0, "gest:gender"] = np.nan  # a unit without GEST
    return frame


def test_mtmm_equals_loops_over_the_pairs() -> None:
    scores = _scores()
    result = mtmm(scores, MEASURES, n_bootstrap=200, seed=1)
    pairs = result.pairs.set_index(["measure_x", "measure_y"])
    assert len(pairs) == 15
    for x, y in combinations(MEASURES, 2):
        row = pairs.loc[(x, y)] if (x, y) in pairs.index else pairs.loc[(y, x)]
        both = scores[[x, y]].dropna()
        assert row["n"] == len(both)
        assert row["value"] == pytest.approx(stats.spearmanr(both[x], both[y]).statistic)
        same_trait = MEASURES[x][0] == MEASURES[y][0]
        same_method = MEASURES[x][1] == MEASURES[y][1]
        kind = {
            (True, False): "convergent",
            (False, True): "heterotrait-monomethod",
            (False, False): "heterotrait-heteromethod",
            (True, True): "monotrait-monomethod",
        }[(same_trait, same_method)]
        assert row["kind"] == kind
        # the matrix holds the same value, both ways
        mx = (MEASURES[x][1], MEASURES[x][0], x)
        my = (MEASURES[y][1], MEASURES[y][0], y)
        assert result.matrix.loc[mx, my] == result.matrix.loc[my, mx] == row["value"]
    # the verdicts: a convergent correlation against every heterotrait one of its two measures
    for r in result.pairs.itertuples():
        touching = [
            abs(o.value)
            for o in result.pairs.itertuples()
            if o.Index != r.Index
            and {o.measure_x, o.measure_y} & {r.measure_x, r.measure_y}
            and (o.trait_x != o.trait_y if r.kind == "convergent" else o.kind == "convergent")
        ]
        assert r.verdict.startswith(f"{r.kind}: ρ = {r.value:.2f} [")
        if r.kind == "convergent":
            beaten = sum(v >= abs(r.value) for v in touching)
            word = "above every" if beaten == 0 else f"not above {beaten} of {len(touching)}"
        elif r.kind == "monotrait-monomethod":
            word = "same trait and method"
        else:
            beaten = sum(v <= abs(r.value) for v in touching)
            word = "below every" if beaten == 0 else f"not below {beaten} of {len(touching)}"
        assert word in r.verdict, r.verdict


def test_mtmm_intervals_and_p_are_the_correlation_machinery() -> None:
    from weatkit.stats.correlation import correlate_pair

    scores = _scores()
    result = mtmm(scores, MEASURES, n_bootstrap=150, seed=2, statistic="kendall")
    row = result.pairs.iloc[0]
    both = scores[[row["measure_x"], row["measure_y"]]].dropna()
    direct = correlate_pair(
        both.iloc[:, 0].to_numpy(), both.iloc[:, 1].to_numpy(), n_bootstrap=150, seed=2,
        confidence_level=0.95, statistics=("kendall",),
    )  # fmt: skip
    assert (row["value"], row["ci_low"], row["ci_high"], row["p"]) == pytest.approx(
        (
            direct["kendall"],
            direct["kendall_ci_low"],
            direct["kendall_ci_high"],
            direct["kendall_p"],
        )
    )
    assert "τ_b = " in row["verdict"]
    assert result == result  # frozen, comparable
    again = mtmm(scores, MEASURES, n_bootstrap=150, seed=2, statistic="kendall")
    pd.testing.assert_frame_equal(result.pairs, again.pairs)


def test_mtmm_too_few_units_and_bad_input() -> None:
    scores = _scores(n=4)
    scores.loc[1:, "gest:gender"] = np.nan
    result = mtmm(scores, MEASURES, n_bootstrap=0)
    pairs = result.pairs
    row = pairs[pairs["measure_y"].eq("gest:gender") | pairs["measure_x"].eq("gest:gender")].iloc[0]
    assert row["verdict"] == "convergent: n=0 < 3: no correlation"
    with pytest.raises(DataError, match="the MTMM matrix: no column 'mbe' in the scores"):
        mtmm(scores, {**MEASURES, "mbe": ("gender", "mbe")})
    with pytest.raises(DataError, match="no trait is measured by 2 methods"):
        mtmm(scores, {"weat:gender": ("gender", "weat"), "weat:race": ("race", "weat")})
    with pytest.raises(DataError, match="one trait only: no discriminant correlation"):
        mtmm(scores, {"weat:gender": ("gender", "weat"), "crows:gender": ("gender", "crows")})
    with pytest.raises(ConfigError, match="statistic: choose pearson, spearman, kendall"):
        mtmm(scores, MEASURES, statistic="cosine")


def test_weatkit_validity_is_the_public_module() -> None:
    assert weatkit.validity.split_half is split_half
    assert "validity" in dir(weatkit)


def test_resamples_with_r_of_minus_one_count_as_minus_one_constant_ones_are_dropped() -> None:
    # units 0 and 1 are ordered oppositely by the two forms: a resample of only them has
    # r = -1, so 2r/(1+r) = -inf, taken as -1; a resample of one unit is constant and dropped
    forms = np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 3.0], [3.0, 2.0]])
    result = split_half(forms, n_bootstrap=400, seed=0)
    rows = np.random.default_rng(0).integers(0, 4, (400, 4))
    kept, minus_one = [], 0
    with np.errstate(invalid="ignore", divide="ignore"):
        for row in rows:
            if len(set(forms[row, 0])) == 1:
                continue
            r = np.corrcoef(forms[row, 0], forms[row, 1])[0, 1]
            minus_one += bool(r < -1 + 1e-12)
            kept.append(-1.0 if r <= -1 / 3 else 2 * r / (1 + r))
    assert minus_one > 0
    assert result.n_degenerate == 400 - len(kept)
    np.testing.assert_allclose(result.confidence_interval, np.quantile(kept, [0.025, 0.975]))


def test_split_half_below_minus_one_is_minus_one() -> None:
    # r = -0.6 in the one split of 2 forms: 2r/(1+r) = -3, out of a correlation's range
    a = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    b = -0.6 * (a - a.mean()) / a.std() + 0.8 * np.array([1.0, -1.0, 0.0, 1.0, -1.0]) / 0.8944
    r = np.corrcoef(a, b)[0, 1]
    assert -1 < r < -1 / 3
    assert split_half(np.column_stack([a, b]), n_bootstrap=0).statistic == -1.0
    c = np.array([1.0, 3.0, 2.0, 5.0, 4.0])
    r = np.corrcoef(a, c)[0, 1]
    assert split_half(np.column_stack([a, c]), n_bootstrap=0).statistic == pytest.approx(
        2 * r / (1 + r)
    )
