"""``weatkit.validity.parallel_forms``: the ``reliability`` table of a run's results against a
hand computation (every split enumerated, Pearson's r by ``numpy.corrcoef``; ICC(2,1) and
ICC(2,k) by the Shrout & Fleiss formulas from the two-way ANOVA sums of squares), and
``weatkit run``'s ``reliability.csv`` on GloVe and two noisy copies of it."""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from click.testing import CliRunner

import weatkit
from weatkit.cli import main
from weatkit.embeddings.default import default_files
from weatkit.lists.sources import select_lists
from weatkit.report.run_dir import read_run_dir
from weatkit.validity import RELIABILITY_COLUMNS, parallel_forms, parallel_forms_shortfall

#: d of 5 embeddings (rows) on 4 parallel lists (columns) of one test.
D = np.array(
    [[0.2, 0.4, 0.1, 0.3], [0.9, 0.7, 1.1, 0.8], [1.5, 1.2, 1.4, 1.6], [0.5, 0.9, 0.4, 0.6],
     [-0.3, 0.1, -0.2, 0.0]]
)  # fmt: skip


def _results(d: np.ndarray, lang: str = "ca", test: str = "weat1") -> pd.DataFrame:
    return pd.DataFrame(
        [
            {"embeddings": f"e{i}", "lang": lang, "list_set": "ca-weat", "list_id": f"l{j}",
             "test": test, "effect_size": d[i, j]}
            for i in range(d.shape[0])
            for j in range(d.shape[1])
        ]
    )  # fmt: skip


def _split_half_by_hand(d: np.ndarray) -> float:
    """Mean r_SB over every distinct split of the k columns into ⌊k/2⌋ and the rest."""
    k = d.shape[1]
    seen, values = set(), []
    for a in combinations(range(k), k // 2):
        b = tuple(j for j in range(k) if j not in a)
        if frozenset([a, b]) in seen:
            continue
        seen.add(frozenset([a, b]))
        r = np.corrcoef(d[:, list(a)].mean(axis=1), d[:, list(b)].mean(axis=1))[0, 1]
        values.append(2 * r / (1 + r))
    return float(np.mean(values))


def _icc2_by_hand(d: np.ndarray) -> tuple[float, float]:
    n, k = d.shape
    grand = d.mean()
    ssr = k * sum((d[i].mean() - grand) ** 2 for i in range(n))
    ssc = n * sum((d[:, j].mean() - grand) ** 2 for j in range(k))
    sst = sum((d[i, j] - grand) ** 2 for i in range(n) for j in range(k))
    msr, msc = ssr / (n - 1), ssc / (k - 1)
    mse = (sst - ssr - ssc) / ((n - 1) * (k - 1))
    single = (msr - mse) / (msr + (k - 1) * mse + k * (msc - mse) / n)
    average = (msr - mse) / (msr + (msc - mse) / n)
    return single, average


def test_reliability_row_equals_the_hand_computation() -> None:
    table = parallel_forms(_results(D), n_bootstrap=0)
    assert list(table.columns) == RELIABILITY_COLUMNS
    assert len(table) == 1
    row = table.iloc[0]
    assert (row["lang"], row["list_set"], row["test"]) == ("ca", "ca-weat", "weat1")
    assert (row["n_units"], row["n_forms"], row["n_lists_dropped"]) == (5, 4, 0)
    assert row["units"] == "e0;e1;e2;e3;e4" and row["forms"] == "l0;l1;l2;l3"
    assert row["n_splits"] == 3
    assert row["split_half"] == pytest.approx(_split_half_by_hand(D), abs=1e-12)
    single, average = _icc2_by_hand(D)
    assert row["icc2"] == pytest.approx(single, abs=1e-12)
    assert row["icc2k"] == pytest.approx(average, abs=1e-12)
    assert row["icc2_ci_low"] < row["icc2"] < row["icc2_ci_high"]
    assert row["icc2k_ci_low"] < row["icc2k"] < row["icc2k_ci_high"]
    assert 0 <= row["icc2_p"] < 0.001


def test_reliability_interval_is_split_halfs_bootstrap() -> None:
    row = parallel_forms(_results(D), n_bootstrap=200, seed=3, confidence_level=0.9).iloc[0]
    frame = pd.DataFrame(D, index=[f"e{i}" for i in range(5)], columns=[f"l{j}" for j in range(4)])
    expected = weatkit.validity.split_half(frame, n_bootstrap=200, seed=3, confidence_level=0.9)
    assert (row["split_half_ci_low"], row["split_half_ci_high"]) == expected.confidence_interval
    assert row["n_degenerate"] == expected.n_degenerate and row["ci_level"] == 0.9


def test_groups_by_language_and_test_and_drops_incomplete_lists() -> None:
    other = _results(D[:, :3] * 2 + 0.1, lang="es", test="weat2")
    incomplete = _results(D).copy()
    missing = (incomplete.embeddings == "e1") & (incomplete.list_id == "l2")
    incomplete.loc[missing, "effect_size"] = np.nan
    incomplete = incomplete[~((incomplete.embeddings == "e4") & (incomplete.list_id == "l0"))]
    table = parallel_forms(pd.concat([other, incomplete]), n_bootstrap=0)
    assert table[["lang", "test", "n_units", "n_forms", "n_lists_dropped"]].values.tolist() == [
        ["ca", "weat1", 5, 2, 2],
        ["es", "weat2", 5, 3, 0],
    ]
    ca = table.iloc[0]
    assert ca["forms"] == "l1;l3"
    assert ca["split_half"] == pytest.approx(_split_half_by_hand(D[:, [1, 3]]), abs=1e-12)
    assert ca["icc2k"] == pytest.approx(_icc2_by_hand(D[:, [1, 3]])[1], abs=1e-12)
    assert table.iloc[1]["split_half"] == pytest.approx(_split_half_by_hand(D[:, :3] * 2 + 0.1))


def test_too_few_embeddings_or_lists_give_an_empty_table_and_one_line() -> None:
    assert parallel_forms_shortfall(_results(D)) is None
    for results, units, lists in ((_results(D[:2]), 2, 4), (_results(D[:, :1]), 5, 1)):
        table = parallel_forms(results, n_bootstrap=0)
        assert table.empty and list(table.columns) == RELIABILITY_COLUMNS
        assert parallel_forms_shortfall(results) == (
            "no reliability across parallel lists: it needs 3 embeddings scored on 2 lists of "
            f"one test in one language; this run has {units} embeddings and at most {lists} "
            "list(s) of a test"
        )


def test_r_of_minus_one_up_to_rounding_counts_as_minus_one() -> None:
    # two identical units (spaces a rotation apart give the same d) and a third: the half
    # scores are two points, r = -1 with 1 + r ~ 1e-16 (or ~3e-11 with float32 rounding of d),
    # which gave r_SB ~ -9e15 (or -7e10); a correlation of full-length forms is at least -1
    for eps in (0.0, 1e-7):
        forms = np.array([[0.1, 0.7], [0.1 + eps, 0.7 - eps], [0.3, 0.2]])
        assert weatkit.validity.split_half(forms, n_bootstrap=0).statistic == -1.0
        row = parallel_forms(_results(forms), n_bootstrap=0).iloc[0]
        assert row["split_half"] == -1.0 and row["icc2"] < 0


def test_constant_half_scores_leave_split_half_nan_not_an_error() -> None:
    flat = np.full((3, 2), 0.4)
    row = parallel_forms(_results(flat), n_bootstrap=0).iloc[0]
    assert np.isnan(row["split_half"]) and row["n_splits"] == 0


# --- weatkit run: reliability.csv -------------------------------------------------------------

FAST = ["--bootstrap", "200", "--permutations", "200", "--no-progress"]
CA_WEAT_EN = ["run", "--lists", "ca-weat", "--lang", "en", "--test", "weat1", *FAST]
RELIABLE = [*CA_WEAT_EN, "--reliability"]


def _glove_variants(root: Path) -> list[str]:
    """GloVe 6B 50d on the words of CA-WEAT's English weat1 lists, plus two noisy copies: three
    embeddings, so that each list has 3 units."""
    matrix_path, index_path = default_files()
    index = {w: i for i, w in enumerate(pd.read_parquet(index_path).iloc[:, 0])}
    tests = select_lists(["ca-weat"], ["en"], tests=["weat1"]).tests
    words = sorted(w for w in set().union(*(t.vocabulary() for t in tests)) if w in index)
    matrix = np.load(matrix_path, mmap_mode="r")
    rng = np.random.default_rng(1)
    specs = []
    for name, noise in (("noisy", 0.3), ("noisier", 0.9)):
        path = root / f"{name}.vec"
        rows = [f"{len(words)} {matrix.shape[1]}"]
        for w in words:
            v = matrix[index[w]] + noise * rng.standard_normal(matrix.shape[1])
            rows.append(w + " " + " ".join(repr(float(x)) for x in v))
        path.write_text("\n".join(rows) + "\n", encoding="utf-8")
        specs += ["--embeddings", f"{name}={path}"]
    return ["--embeddings", "glove-6b-50d", *specs]


def test_run_writes_reliability_across_the_lists(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main, [*RELIABLE, *_glove_variants(tmp_path), "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    results = read_run_dir(out).results
    assert results["embeddings"].nunique() == 3 and results["list_id"].nunique() >= 2
    written = read_run_dir(out).reliability
    expected = parallel_forms(results, n_bootstrap=200, seed=0, confidence_level=0.95)
    assert len(written) == 1 and written.iloc[0]["n_units"] == 3
    pd.testing.assert_frame_equal(
        written.drop(columns=["forms"]), expected.drop(columns=["forms"]), check_dtype=False
    )
    row = written.iloc[0]
    assert row["forms"] == expected.iloc[0]["forms"]
    assert (
        "reliability across parallel lists: 1 language × test row(s), 3 embeddings; median "
        f"split-half r_SB {row['split_half']:.2f}, median ICC(2,k) {row['icc2k']:.2f} "
        "(reliability.csv)"
    ) in result.stderr


def test_run_with_one_embeddings_notes_why_there_is_no_reliability(tmp_path: Path) -> None:
    out = tmp_path / "run"
    result = CliRunner().invoke(main, [*RELIABLE, "--out", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "no reliability across parallel lists: it needs 3 embeddings scored on 2 lists" in (
        result.stderr
    )
    assert not (out / "reliability.csv").exists()
    res = CliRunner().invoke(main, [*RELIABLE, "--format", "csv", "--table", "reliability"])
    assert res.exit_code == 1
    assert "--table reliability needs --reliability, 2 parallel lists of a test" in res.stderr


def test_run_without_reliability_computes_none(tmp_path: Path) -> None:
    """Reliability is asked for (``--reliability``): without it a run with parallel lists and
    three embeddings writes no reliability.csv, prints no line and times nothing."""
    out = tmp_path / "run"
    result = CliRunner().invoke(
        main, [*CA_WEAT_EN, *_glove_variants(tmp_path), "--out", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    assert not (out / "reliability.csv").exists()
    assert "reliability across parallel lists" not in result.stderr
    manifest = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    assert "reliability" not in manifest["timings_s"]
