"""p_holm and q_bh (issue 19, item 4) against plain hand computations, and on a real run."""

from __future__ import annotations

import math
from pathlib import Path
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from weatkit.engine.weat import EngineOptions, weat
from weatkit.errors import WeatkitError
from weatkit.report.tables import RESULT_COLUMNS, results_frame, summary_frame
from weatkit.stats.multiplicity import adjust_pvalues

# a small table: ties, a NaN (no permutation test), p = 1
P = [0.010, 0.040, math.nan, 0.030, 0.002, 0.040, 0.500, 1.0]


def _holm_by_hand(p: list[float]) -> list[float]:
    """Holm (1979): sort, multiply the i-th smallest (from 1) by m − i + 1, running max, cap 1."""
    idx = [i for i, v in enumerate(p) if not math.isnan(v)]
    order = sorted(idx, key=lambda i: p[i])
    m = len(order)
    out = [math.nan] * len(p)
    running = 0.0
    for rank, i in enumerate(order, start=1):
        running = max(running, (m - rank + 1) * p[i])
        out[i] = min(1.0, running)
    return out


def _bh_by_hand(p: list[float]) -> list[float]:
    """Benjamini & Hochberg (1995): m p_(i) / i, running min from the largest down, cap 1."""
    idx = [i for i, v in enumerate(p) if not math.isnan(v)]
    order = sorted(idx, key=lambda i: p[i])
    m = len(order)
    out = [math.nan] * len(p)
    running = math.inf
    for rank in range(m, 0, -1):
        i = order[rank - 1]
        running = min(running, m * p[i] / rank)
        out[i] = min(1.0, running)
    return out


def test_holm_and_bh_match_the_hand_computations() -> None:
    np.testing.assert_allclose(adjust_pvalues(P, "holm"), _holm_by_hand(P), rtol=1e-12)
    np.testing.assert_allclose(adjust_pvalues(P, "fdr_bh"), _bh_by_hand(P), rtol=1e-12)
    # the values themselves, written out: m = 7 defined p-values
    holm = adjust_pvalues(P, "holm")
    assert holm[4] == pytest.approx(7 * 0.002)
    assert holm[0] == pytest.approx(6 * 0.010)
    assert holm[3] == pytest.approx(5 * 0.030)
    assert holm[1] == holm[5] == pytest.approx(0.16)  # 4 × 0.04, then max(0.16, 3 × 0.04)
    assert holm[6] == pytest.approx(1.0) and holm[7] == 1.0
    bh = adjust_pvalues(P, "fdr_bh")
    assert bh[4] == pytest.approx(7 * 0.002 / 1)
    assert bh[1] == bh[5] == bh[3] == pytest.approx(7 * 0.040 / 5)  # 0.03 takes the min above
    assert bh[6] == pytest.approx(7 * 0.5 / 6)
    assert math.isnan(holm[2]) and math.isnan(bh[2])


def test_edge_cases() -> None:
    assert np.isnan(adjust_pvalues([math.nan, math.nan], "holm")).all()
    assert adjust_pvalues([], "fdr_bh").shape == (0,)
    assert adjust_pvalues([0.02], "holm").tolist() == [0.02]  # a family of one
    with pytest.raises(WeatkitError, match="between 0 and 1"):
        adjust_pvalues([0.1, 1.5], "holm")
    with pytest.raises(WeatkitError, match="unknown p-value adjustment"):
        adjust_pvalues([0.1], "bonferroni")  # type: ignore[arg-type]


#: p-values as permutation tests give them ((k + 1) / (n + 1): many ties), and any in [0, 1]
_PVALUES = st.lists(
    st.one_of(
        st.builds(lambda k, n: (min(k, n) + 1) / (n + 1), st.integers(0, 60), st.integers(1, 60)),
        st.floats(0, 1),
        st.sampled_from([0.0, 1.0, 5e-324, math.nan]),
    ),
    max_size=80,
)


@settings(max_examples=300, deadline=None)
@given(_PVALUES)
def test_bit_for_bit_the_values_of_statsmodels(p: list[float]) -> None:
    from statsmodels.stats.multitest import multipletests

    defined = [v for v in p if not math.isnan(v)]
    for method in ("holm", "fdr_bh"):
        ours = adjust_pvalues(p, method)
        with mock.patch("gc.collect"):  # statsmodels' Holm collects garbage: slow in a test
            expected = multipletests(defined, method=method)[1] if defined else []
        np.testing.assert_array_equal(ours[~np.isnan(np.asarray(p, dtype=float))], expected)


def _rows(pvalues: list[float]) -> list[dict[str, object]]:
    rows = []
    for i, p in enumerate(pvalues):
        row: dict[str, object] = dict.fromkeys(RESULT_COLUMNS, np.nan)
        row.update(embeddings="e", lang="en", list_set="s", list_id=f"l{i}", test=f"t{i}")
        row.update(statistic=1.0, effect_size=0.5, p_value=p)
        rows.append(row)
    return rows


def test_results_frame_adjusts_over_all_its_rows_and_summary_copies_single_lists() -> None:
    rows = _rows(P)
    rows[0]["p_holm"] = 0.123  # a job-level value is recomputed over the whole table
    frame = results_frame(rows)
    np.testing.assert_allclose(frame["p_holm"], _holm_by_hand(P), rtol=1e-12)
    np.testing.assert_allclose(frame["q_bh"], _bh_by_hand(P), rtol=1e-12)
    summary = summary_frame(frame, EngineOptions())
    np.testing.assert_allclose(summary["p_holm"], frame["p_holm"], rtol=1e-12)
    np.testing.assert_allclose(summary["q_bh"], frame["q_bh"], rtol=1e-12)


def test_effect_size_se_is_the_sd_of_the_bootstrap_distribution() -> None:
    rng = np.random.default_rng(3)
    X, Y, A, B = (rng.normal(size=(7, 5)) for _ in range(4))
    res = weat(X, Y, A, B, n_bootstrap=400, n_permutations=0, keep_distributions=True)
    assert res.bootstrap_effect_size is not None and res.effect_size_se is not None
    dist = res.bootstrap_effect_size[~np.isnan(res.bootstrap_effect_size)]
    assert res.effect_size_se == pytest.approx(float(np.std(dist, ddof=1)), rel=1e-12)
    assert weat(X, Y, A, B, n_bootstrap=0, n_permutations=0).effect_size_se is None


@pytest.mark.slow
def test_a_real_run_has_the_columns_and_they_agree_with_its_p_values(
    data_dir: Path, tmp_path: Path
) -> None:
    from weatkit import RunConfig, run
    from weatkit.report.run_dir import read_run_dir, write_run_dir

    config = RunConfig(
        lists=("ca-weat",),
        langs=("en",),
        tests=("weat1", "weat2"),
        engine=EngineOptions(n_bootstrap=200, n_permutations=300, device="cpu"),
    )
    write_run_dir(run(config, show_progress=False), tmp_path / "out")
    raw = pd.read_csv(tmp_path / "out" / "results.csv")
    assert len(raw) > 4 and raw["p_value"].notna().all()
    np.testing.assert_allclose(raw["p_holm"], _holm_by_hand(list(raw["p_value"])), rtol=1e-9)
    np.testing.assert_allclose(raw["q_bh"], _bh_by_hand(list(raw["p_value"])), rtol=1e-9)
    assert (raw["effect_size_se"] > 0).all()
    read = read_run_dir(tmp_path / "out").results  # the reader accepts the new columns
    assert {"effect_size_se", "p_holm", "q_bh"} <= set(read.columns)
