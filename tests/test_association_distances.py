"""RND, MAC and ECT (weatkit.association) equal plain loops over the words, by hand on tiny
examples, on random vectors and on GloVe 6B 50d, with every bootstrap resample recomputed by a
loop from the resampling module's own draws."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import weatkit
from tests import naive_association as naive
from weatkit.errors import WeatkitError
from weatkit.stats.resampling import bootstrap_draws

RNG = np.random.default_rng(26)


def _random(*sizes: int, dim: int = 6) -> list[np.ndarray]:
    return [RNG.normal(size=(n, dim)) for n in sizes]


def _draws(sizes: tuple[int, ...], n: int, seed: int = 0) -> list[np.ndarray]:
    return list(bootstrap_draws(sizes, n, seed=seed, scheme="weat"))


# --- RND ----------------------------------------------------------------------------------------


def test_rnd_by_hand() -> None:
    T = np.array([[2.0, 0.0], [1.0, 1.0]])
    A, B = np.array([[1.0, 0.0]]), np.array([[0.0, 3.0]])
    # unit vectors: m_A = (1, 0), m_B = (0, 1); δ((1, 0)) = 0 − √2, δ(√½, √½) = 0
    res = weatkit.rnd(T, A, B, n_bootstrap=0)
    assert res.statistic == pytest.approx(-math.sqrt(2), abs=1e-12)
    assert res.per_word == pytest.approx({"0": -math.sqrt(2), "1": 0.0}, abs=1e-12)
    assert weatkit.rnd(T, A, B, reduction="mean", n_bootstrap=0).statistic == pytest.approx(
        -math.sqrt(2) / 2, abs=1e-12
    )
    # cosine distance: (1 − 1) − (1 − 0) = −1, and 0
    cosine = weatkit.rnd(T, A, B, distance="cosine", n_bootstrap=0)
    assert cosine.statistic == pytest.approx(-1.0, abs=1e-12)
    assert res.confidence_interval is None and res.bootstrap_statistic is None


@pytest.mark.parametrize("distance", ["euclidean", "cosine"])
@pytest.mark.parametrize("reduction", ["sum", "mean"])
@pytest.mark.parametrize("normalize", [True, False])
def test_rnd_equals_the_loop(distance: str, reduction: str, normalize: bool) -> None:
    options = {"distance": distance, "reduction": reduction, "normalize": normalize}
    T, A, B = _random(9, 5, 7)
    res = weatkit.rnd(T, A, B, n_bootstrap=0, **options)
    assert res.statistic == pytest.approx(naive.rnd(T, A, B, **options), rel=1e-10, abs=1e-12)
    g = naive.glove()
    res = weatkit.rnd(
        naive.OCCUPATIONS, naive.FEMALE, naive.MALE, vectors=g, n_bootstrap=0, **options
    )
    rows = [naive.rows(w) for w in (naive.OCCUPATIONS, naive.FEMALE, naive.MALE)]
    assert res.statistic == pytest.approx(naive.rnd(*rows, **options), rel=1e-10, abs=1e-12)
    assert list(res.per_word) == naive.OCCUPATIONS


def test_rnd_wefe_cos_is_minus_the_cosine_distance() -> None:
    """WEFE's distance="cos" (and Garg et al.'s code) averages cos(v, m_0) − cos(v, m_1)."""
    T, A, B = _random(6, 4, 4)
    m_a, m_b = A.mean(axis=0), B.mean(axis=0)
    wefe_cos = np.mean([naive.cos(v, m_a) - naive.cos(v, m_b) for v in T])
    ours = weatkit.rnd(T, A, B, distance="cosine", reduction="mean", normalize=False, n_bootstrap=0)
    assert ours.statistic == pytest.approx(-wefe_cos, rel=1e-12)


def test_rnd_bootstrap_equals_the_loop_over_resamples() -> None:
    T, A, B = _random(7, 5, 6)
    res = weatkit.rnd(T, A, B, n_bootstrap=40, seed=3)
    d_t, d_a, d_b = _draws((7, 5, 6), 40, seed=3)
    expected = [naive.rnd(T[d_t[r]], A[d_a[r]], B[d_b[r]]) for r in range(40)]
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-9, atol=1e-12)
    low, high = np.quantile(expected, [0.025, 0.975])
    assert res.confidence_interval == pytest.approx((low, high), rel=1e-9)


# --- MAC ----------------------------------------------------------------------------------------


def test_mac_by_hand() -> None:
    T = {"T": np.array([[1.0, 0.0], [0.0, 1.0]])}
    A1, A2 = np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])
    res = weatkit.mac(T, [A1, A2], n_bootstrap=0)
    # S((1,0), A1) = 0, S((1,0), A2) = 1 − √½; S((0,1), A1) = 1, S((0,1), A2) = 1 − √½
    expected = (0 + 1 + 2 * (1 - math.sqrt(0.5))) / 4
    assert res.statistic == pytest.approx(expected, abs=1e-12)
    assert res.distances["T"]["1"] == pytest.approx(
        {"attribute set 1": 1.0, "attribute set 2": 1 - math.sqrt(0.5)}, abs=1e-12
    )


def test_mac_equals_the_loop_for_several_sets() -> None:
    T1, T2, T3, A1, A2 = _random(4, 5, 3, 6, 2)
    res = weatkit.mac({"a": T1, "b": T2, "c": T3}, [A1, A2], n_bootstrap=0)
    assert res.statistic == pytest.approx(naive.mac([T1, T2, T3], [A1, A2]), rel=1e-12)
    for name, T in (("a", T1), ("b", T2), ("c", T3)):
        assert res.per_set[name] == pytest.approx(naive.mac([T], [A1, A2]), rel=1e-12)
    g = naive.glove()
    res = weatkit.mac(
        [naive.FEMALE, naive.MALE], [naive.PLEASANT, naive.UNPLEASANT], vectors=g, n_bootstrap=0
    )
    rows = [naive.rows(w) for w in (naive.FEMALE, naive.MALE, naive.PLEASANT, naive.UNPLEASANT)]
    assert res.statistic == pytest.approx(naive.mac(rows[:2], rows[2:]), rel=1e-12)


def test_mac_bootstrap_equals_the_loop_over_resamples() -> None:
    T1, T2, A1, A2 = _random(4, 5, 3, 6)
    res = weatkit.mac([T1, T2], [A1, A2], n_bootstrap=30, seed=5)
    d = _draws((4, 5, 3, 6), 30, seed=5)
    expected = [
        naive.mac([T1[d[0][r]], T2[d[1][r]]], [A1[d[2][r]], A2[d[3][r]]]) for r in range(30)
    ]
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-10)
    first = [naive.mac([T1[d[0][r]]], [A1[d[2][r]], A2[d[3][r]]]) for r in range(30)]
    low, high = np.quantile(first, [0.025, 0.975])
    assert res.per_set_ci["target set 1"] == pytest.approx((low, high), rel=1e-10)


# --- ECT ----------------------------------------------------------------------------------------


def test_ect_by_hand() -> None:
    X, Y = np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]])
    A = np.array([[1.0, 0.1], [1.0, 0.5], [1.0, 2.0]])
    # cos to (1, 0) falls along A, cos to (0, 1) rises: ρ = −1
    res = weatkit.ect([X, Y], A, n_bootstrap=0)
    assert res.statistic == pytest.approx(-1.0)
    assert res.similarities["0"][0] == pytest.approx(1 / math.sqrt(1.01))


def test_ect_equals_the_loop() -> None:
    X, Y, A = _random(5, 6, 9)
    res = weatkit.ect([X, Y], A, n_bootstrap=0)
    assert (res.statistic, res.pvalue) == pytest.approx(naive.ect(X, Y, A), rel=1e-12)
    g = naive.glove()
    res = weatkit.ect(
        {"f": naive.FEMALE, "m": naive.MALE}, naive.OCCUPATIONS, vectors=g, n_bootstrap=0
    )
    rows = [naive.rows(w) for w in (naive.FEMALE, naive.MALE, naive.OCCUPATIONS)]
    assert (res.statistic, res.pvalue) == pytest.approx(naive.ect(*rows), rel=1e-12)
    normalized = weatkit.ect([X, Y], A, normalize=True, n_bootstrap=0)
    assert normalized.statistic == pytest.approx(
        naive.ect(naive.unit(X), naive.unit(Y), A)[0], rel=1e-12
    )


def test_ect_bootstrap_is_spearman_of_the_resampled_lists_with_their_repeats() -> None:
    X, Y, A = _random(4, 4, 6)
    res = weatkit.ect([X, Y], A, n_bootstrap=60, seed=1)
    d_x, d_y, d_a = _draws((4, 4, 6), 60, seed=1)
    expected = []
    with warnings.catch_warnings():  # scipy warns of a constant input (ρ undefined)
        warnings.simplefilter("ignore")
        for r in range(60):
            expected.append(naive.ect(X[d_x[r]], Y[d_y[r]], A[d_a[r]])[0])
    np.testing.assert_allclose(res.bootstrap_statistic, expected, rtol=1e-10, atol=1e-12)
    assert res.n_undefined == int(np.isnan(expected).sum())


def test_ect_takes_two_target_sets_and_three_attributes() -> None:
    X, Y, Z, A = _random(3, 3, 3, 5)
    with pytest.raises(WeatkitError, match=r"^ect: needs exactly 2 target sets, got 3$"):
        weatkit.ect([X, Y, Z], A)
    with pytest.raises(
        WeatkitError, match=r"^ect: attributes has 2 item\(s\); it needs at least 3$"
    ):
        weatkit.ect([X, Y], A[:2])
