"""The CA-WEAT summary of report/tables.py: one set of lists per row, NaN rows left out.

Bug 7d (issue 15): ``ci_level`` was overwritten per column (the statistic's interval got the
effect size's coverage) and ``n_lists`` counted lists whose values are NaN.
"""

from __future__ import annotations

import io
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import binom

from weatkit.engine.weat import EngineOptions
from weatkit.report.tables import SUMMARY_COLUMNS, results_frame, summary_frame


def coverage(n: int, j: int) -> float:
    """P(x_(j) ≤ median ≤ x_(n−j+1)) = 1 − 2 P(Binomial(n, ½) ≤ j − 1)."""
    return 1.0 - 2.0 * binom.cdf(j - 1, n, 0.5)


def _results(statistic: list[float], effect: list[float], test: str = "weat1") -> pd.DataFrame:
    rows = [
        {
            "embeddings": "toy",
            "lang": "de",
            "list_set": "ca-weat:v1",
            "list_id": f"de_{i}",
            "test": test,
            "statistic": s,
            "effect_size": d,
        }
        for i, (s, d) in enumerate(zip(statistic, effect, strict=True))
    ]
    return results_frame(rows)


def test_nan_rows_are_left_out_of_n_lists_medians_and_coverage() -> None:
    # list 3's pooled std is 0: S = 0 is defined, d is not
    statistic = [0.5, 0.1, 0.0, 0.9, 0.3, 0.7, 0.2]
    effect = [1.0, 0.2, np.nan, 1.5, 0.6, 1.2, 0.4]
    row = summary_frame(_results(statistic, effect), EngineOptions()).iloc[0]
    used = [i for i in range(7) if not math.isnan(effect[i])]
    s = np.sort(np.asarray(statistic)[used])
    d = np.sort(np.asarray(effect)[used])
    assert row["n_lists"] == 6
    # n = 6: only [min, max] is left, covering 1 − 2 · 0.5⁶ = 96.875 %
    assert row["ci_level"] == pytest.approx(coverage(6, 1), abs=1e-12)
    assert row["ci_level"] == pytest.approx(0.96875, abs=1e-12)
    assert row["statistic"] == pytest.approx(np.median(s))
    assert (row["statistic_ci_low"], row["statistic_ci_high"]) == (s[0], s[-1])
    assert row["effect_size"] == pytest.approx(np.median(d))
    assert (row["effect_size_ci_low"], row["effect_size_ci_high"]) == (d[0], d[-1])


def test_ci_level_does_not_depend_on_the_column_order() -> None:
    # the statistic NaN where the effect size is not (a hand-edited results table): the coverage
    # must be that of both intervals, not of whichever column came last
    statistic = [0.5, np.nan, 0.3, 0.9, 0.3, 0.7, 0.2]
    effect = [1.0, 0.2, 0.8, 1.5, 0.6, 1.2, 0.4]
    row = summary_frame(_results(statistic, effect), EngineOptions()).iloc[0]
    assert row["n_lists"] == 6
    assert row["ci_level"] == pytest.approx(coverage(6, 1), abs=1e-12)
    assert row["effect_size"] == pytest.approx(np.median([1.0, 0.8, 1.5, 0.6, 1.2, 0.4]))


def test_complete_lists_unchanged() -> None:
    rng = np.random.default_rng(0)
    statistic, effect = rng.normal(size=24).tolist(), rng.normal(size=24).tolist()
    row = summary_frame(_results(statistic, effect), EngineOptions()).iloc[0]
    assert row["n_lists"] == 24
    assert row["ci_level"] == pytest.approx(coverage(24, 7), abs=1e-12)
    assert row["effect_size"] == pytest.approx(np.median(effect))
    assert list(summary_frame(_results(statistic, effect), EngineOptions()).columns) == (
        SUMMARY_COLUMNS
    )


def test_a_set_of_lists_without_any_defined_value() -> None:
    row = summary_frame(_results([0.0, 0.0], [np.nan, np.nan]), EngineOptions()).iloc[0]
    assert row["n_lists"] == 0
    assert math.isnan(row["effect_size"]) and math.isnan(row["ci_level"])
    assert row["ci_method"] == "median-order-statistic"


def _summary_by_groups(results: pd.DataFrame, options: EngineOptions) -> pd.DataFrame:
    """The summary as it was computed before issue 27: one pandas frame per group."""
    from weatkit.report.tables import VALUE_COLUMNS
    from weatkit.stats.aggregate import median_ci

    rows = []
    group_keys = ["embeddings", "lang", "list_set", "test"]
    for keys, group in results.groupby(group_keys, sort=False):
        row: dict[str, object] = dict(zip(group_keys, keys, strict=True))
        values = group[["statistic", "effect_size"]].apply(pd.to_numeric, errors="coerce")
        defined = values.notna().all(axis=1)
        row["n_lists"] = int(defined.sum())
        if len(group) == 1:
            single = group.iloc[0]
            for col in VALUE_COLUMNS:
                row[col] = single[col]
            row["ci_method"] = f"bootstrap-{options.ci_method}" if options.n_bootstrap else ""
            row["ci_level"] = options.confidence_level if options.n_bootstrap else np.nan
        else:
            row["ci_level"] = np.nan
            for col in ("statistic", "effect_size"):
                if not defined.any():
                    row[col] = row[f"{col}_ci_low"] = row[f"{col}_ci_high"] = np.nan
                    continue
                m = median_ci(values.loc[defined, col].to_numpy(float), options.confidence_level)
                row[col], row[f"{col}_ci_low"], row[f"{col}_ci_high"] = m.median, m.low, m.high
                row["ci_level"] = m.confidence_level
            row["p_value"] = np.nan
            row["ci_method"] = "median-order-statistic"
        rows.append(row)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


_VALUE = st.one_of(st.floats(-3, 3), st.just(math.nan))
_ROW = st.tuples(
    st.sampled_from(["e1", "e2"]),
    st.sampled_from(["de", "en", None]),  # a missing key: the row is in no group
    st.sampled_from(["ca-weat:v1", "x-weat"]),
    st.sampled_from(["weat1", "weat2"]),
    _VALUE,
    _VALUE,
    st.one_of(st.floats(0, 1), st.just(math.nan)),
)


@settings(max_examples=150, deadline=None)
@given(st.lists(_ROW, max_size=60), st.sampled_from([0, 100]))
def test_the_summary_is_the_one_of_per_group_frames(rows: list[tuple], n_bootstrap: int) -> None:
    """Equal, values and dtypes, to the per-group computation, also read back from CSV."""
    frame = results_frame(
        [
            {
                "embeddings": e, "lang": lang, "list_set": ls, "list_id": f"l{i}", "test": t,
                "statistic": s, "effect_size": d, "p_value": p,
            }
            for i, (e, lang, ls, t, s, d, p) in enumerate(rows)
        ]
    )  # fmt: skip
    options = EngineOptions(n_bootstrap=n_bootstrap)
    for table in (frame, pd.read_csv(io.StringIO(frame.to_csv(index=False)))):
        expected = _summary_by_groups(table, options)
        got = summary_frame(table, options)
        pd.testing.assert_frame_equal(got, expected, check_exact=True)
        assert got.to_csv(index=False) == expected.to_csv(index=False)
