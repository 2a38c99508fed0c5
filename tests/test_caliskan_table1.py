"""Caliskan et al. (2017) Table 1 reproduced from their exact items and GloVe 840B vectors (cbn)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests import naive_weat as naive
from weatkit.embeddings.coverage import cover_test
from weatkit.embeddings.static import load_static
from weatkit.engine.weat import EngineOptions, WeatInput, run_weat
from weatkit.lists.sources import load_list_set

TABLE1_D = [1.50, 1.53, 1.41, 1.50, 1.28, 1.81, 1.06, 1.24, 1.38, 1.21]
# Exact one-sided permutation p-values over all splits (cbn SOURCE.md), WEAT6-10.
EXACT_P = {
    "weat6": 7.77e-05,
    "weat7": 0.01570,
    "weat8": 0.00474,
    "weat9": 0.00433,
    "weat10": 0.00513,
}


@pytest.fixture(scope="module")
def covered(data_dir: Path):
    tests = load_list_set("caliskan")
    vocab = set().union(*(t.vocabulary() for t in tests))
    vectors = load_static(data_dir / "cbn" / "cbn_item_vectors_glove840B300d.txt", words=vocab)
    return [cover_test(t, vectors, min_coverage=1.0) for t in tests]


def test_table1_effect_sizes(covered) -> None:
    assert [c.test.test for c in covered] == [f"weat{i}" for i in range(1, 11)]
    inputs = [WeatInput(*(c.vectors[k] for k in "XYAB")) for c in covered]
    results = run_weat(inputs, EngineOptions(ddof=1, n_bootstrap=0, n_permutations=0))
    assert [round(r.effect_size, 2) for r in results] == TABLE1_D
    for c, r in zip(covered, results, strict=True):
        X, Y, A, B = (c.vectors[k].astype(np.float64) for k in "XYAB")
        assert r.effect_size == pytest.approx(naive.effect_size(X, Y, A, B, ddof=1), abs=5e-4)
        assert r.statistic == pytest.approx(naive.statistic(X, Y, A, B), abs=5e-4)


def test_table1_sizes_and_exact_pvalues(covered) -> None:
    chosen = [c for c in covered if c.test.test in EXACT_P]
    inputs = [WeatInput(*(c.vectors[k] for k in "XYAB")) for c in chosen]
    results = run_weat(inputs, EngineOptions(n_bootstrap=0))
    for c, r in zip(chosen, results, strict=True):
        assert r.permutation_method == "exact"
        assert r.pvalue == pytest.approx(EXACT_P[c.test.test], rel=2e-3)
    sizes = {c.test.test: tuple(len(c.items[k]) for k in "XYAB") for c in covered}
    assert sizes["weat3"] == (32, 32, 25, 25)
    assert sizes["weat9"] == (6, 6, 7, 7)
