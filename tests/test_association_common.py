"""What the association metrics share: word sets or arrays in, one-line errors naming the metric
and the words, resample plans that depend only on the seed and the set sizes (the WEAT engine's
for a WEAT test's sizes), intervals that cover, and examples in the docstrings that run."""

from __future__ import annotations

import doctest
import importlib

import numpy as np
import pytest

import weatkit
from tests import naive_association as naive
from weatkit.errors import WeatkitError
from weatkit.stats.resampling import bootstrap_draws, bootstrap_indices

MODULES = ["rnd", "rnsb", "mac", "ect", "ripa", "wefat", "sc_weat", "direct_bias"]


@pytest.mark.parametrize("name", MODULES)
def test_the_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(f"weatkit.association.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0, name
    assert getattr(weatkit, name) is getattr(module, name)


def test_words_and_arrays_give_the_same_numbers() -> None:
    glove = naive.glove()
    words = naive.rnd(
        naive.rows(naive.OCCUPATIONS), naive.rows(naive.FEMALE), naive.rows(naive.MALE)
    )
    res = weatkit.rnd(naive.OCCUPATIONS, naive.FEMALE, naive.MALE, vectors=glove, n_bootstrap=50)
    arrays = weatkit.rnd(
        *(naive.rows(w) for w in (naive.OCCUPATIONS, naive.FEMALE, naive.MALE)), n_bootstrap=50
    )
    assert res.statistic == pytest.approx(words) == arrays.statistic
    np.testing.assert_allclose(res.bootstrap_statistic, arrays.bootstrap_statistic, rtol=1e-12)
    assert list(arrays.per_word) == [str(i) for i in range(len(naive.OCCUPATIONS))]
    as_array = weatkit.rnd(
        np.array(naive.OCCUPATIONS), naive.FEMALE, naive.MALE, vectors=glove, n_bootstrap=0
    )
    assert as_array.per_word == res.per_word


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (
            lambda g: weatkit.rnd(["nurse"], ["she"], ["he"]),
            "rnd: targets is a list of words: give vectors= (a WordVectors) to look them up, or "
            "pass arrays of vectors",
        ),
        (
            lambda g: weatkit.mac([["nurse", "zzyzx", "qqq", "zzyzx"]], [["she"]], vectors=g),
            "mac: 2 word(s) of target set 1 not in glove-6b-50d: 'zzyzx', 'qqq' (leave them out "
            "of the list)",
        ),
        (lambda g: weatkit.rnd([], ["she"], ["he"], vectors=g), "rnd: targets is empty"),
        (
            lambda g: weatkit.rnd(np.ones((2, 3)), np.ones((1, 3)), np.ones((1, 4))),
            "rnd: B has vectors of width 4, others 3",
        ),
        (
            lambda g: weatkit.rnd(np.ones((2, 3)), np.ones((1, 3)), np.zeros((1, 3))),
            "rnd: B has an all-zero vector",
        ),
        (
            lambda g: weatkit.rnd(np.ones(3), np.ones((1, 3)), np.ones((1, 3))),
            "rnd: targets must be an (n, dim) array, got shape (3,)",
        ),
        (
            lambda g: weatkit.ripa([np.ones((2, 3))], [np.ones((1, 3)), np.ones((1, 3)) * 2]),
            "ripa: pair 1 must be two words (x, y), got ndarray (vectors: give a tuple (X, Y) "
            "of two row-aligned (n, dim) arrays)",
        ),
        (
            lambda g: weatkit.ripa([["nurse"]], [("she", "he", "it")], vectors=g),
            "ripa: pair 1 must be two words (x, y), got ('she', 'he', 'it') (vectors: give a "
            "tuple (X, Y) of two row-aligned (n, dim) arrays)",
        ),
        (
            lambda g: weatkit.mac({"T": np.full((2, 3), np.nan)}, [np.ones((1, 3))]),
            "mac: T has NaN or infinite values",
        ),
        (
            lambda g: weatkit.mac([np.ones((2, 3))], np.ones((2, 3))),
            "mac: attribute sets must be a list (or a mapping name -> set) of word sets, not one "
            "set; wrap it in a list",
        ),
        (
            lambda g: weatkit.ect([np.ones((2, 3))] * 3, np.eye(3)),
            "ect: needs exactly 2 target sets, got 3",
        ),
        (
            lambda g: weatkit.ripa([["nurse"]], [], vectors=g),
            "ripa: needs at least one definitional pair (x, y), got none",
        ),
        (
            lambda g: weatkit.direct_bias(np.ones((2, 3)), [("she", "he")]),
            "direct_bias: pairs (x) is a list of words: give vectors= (a WordVectors) to look them "
            "up, or pass arrays of vectors",
        ),
        (
            lambda g: weatkit.rnd(
                np.ones((2, 3)), np.ones((1, 3)), np.ones((1, 3)), n_bootstrap=-1
            ),
            "n_bootstrap: must be >= 0 (0: no interval), got -1",
        ),
        (
            lambda g: weatkit.rnd(
                np.ones((2, 3)), np.ones((1, 3)), np.ones((1, 3)), confidence_level=95
            ),
            "confidence_level: must be in (0, 1), got 95",
        ),
        (
            lambda g: weatkit.rnd(np.ones((2, 3)), np.ones((1, 3)), np.ones((1, 3)), distance="l1"),
            "distance: must be one of euclidean, cosine, got 'l1'",
        ),
        (
            lambda g: weatkit.ripa(
                [np.ones((2, 3))], (np.ones((1, 3)), np.ones((1, 3)) * 2), relation="svd"
            ),
            "relation: must be one of pca, mean, got 'svd'",
        ),
    ],
)
def test_bad_input_is_one_line_naming_the_metric(call, message: str) -> None:
    with pytest.raises(WeatkitError) as err:
        call(naive.glove())
    assert str(err.value) == message


def test_the_plan_depends_only_on_the_seed_and_the_sizes() -> None:
    rng = np.random.default_rng(0)
    first = [rng.normal(size=(n, 4)) for n in (5, 6, 4, 3)]
    other = [rng.normal(size=(n, 4)) for n in (5, 6, 4, 3)]
    a = weatkit.mac(first[:2], first[2:], n_bootstrap=200, seed=7)
    again = weatkit.mac(first[:2], first[2:], n_bootstrap=200, seed=7)
    assert again.confidence_interval == a.confidence_interval  # same seed: same interval
    np.testing.assert_array_equal(again.bootstrap_statistic, a.bootstrap_statistic)
    other_seed = weatkit.mac(first[:2], first[2:], n_bootstrap=200, seed=8)
    assert other_seed.confidence_interval != a.confidence_interval
    # the same resamples, whatever the vectors: the loop over the module's draws gives both
    draws = list(bootstrap_draws((5, 6, 4, 3), 200, seed=7, scheme="weat"))
    for sets, res in (
        (first, a),
        (other, weatkit.mac(other[:2], other[2:], n_bootstrap=200, seed=7)),
    ):
        expected = [
            naive.mac(
                [s[d[r]] for s, d in zip(sets[:2], draws[:2], strict=True)],
                [s[d[r]] for s, d in zip(sets[2:], draws[2:], strict=True)],
            )
            for r in range(0, 200, 40)
        ]
        np.testing.assert_allclose(res.bootstrap_statistic[::40], expected, rtol=1e-10)
    # on a WEAT test's sizes, in the order X, Y, A, B, they are the WEAT engine's resamples
    engine = bootstrap_indices((5, 6, 4, 3), 200, 7)
    for key, d in zip("XYAB", draws, strict=True):
        np.testing.assert_array_equal(engine[key], d)


def test_the_percentile_intervals_cover_the_population_values() -> None:
    """A mean over one list (RIPA with one pair) is covered about 95% of the time; MAC, a mean
    over the pairs of two lists resampled independently, more often: that interval is
    conservative when the part of each pair's distance proper to the pair dominates, as with
    random vectors (McCullagh 2000)."""
    rng = np.random.default_rng(11)
    population = rng.standard_t(5, size=(2000, 5)) + 0.3
    x, y = np.array([[1.0, 0, 0, 0, 0]]), np.array([[0.0, 0, 0, 0, 0.5]])
    truth = float((population @ ((x - y) / np.linalg.norm(x - y)).T).mean())
    hits = 0
    for run in range(300):
        sample = population[rng.choice(2000, 15, replace=False)]
        low, high = weatkit.ripa([sample], (x, y), n_bootstrap=400, seed=run).confidence_interval
        hits += low <= truth <= high
    assert 0.9 <= hits / 300 <= 0.98
    targets, a1, a2 = (rng.normal(size=(400, 5)) + shift for shift in (0.0, 0.4, -0.2))
    truth = naive.mac([targets], [a1, a2])
    hits = 0
    for run in range(100):
        pick = [rng.choice(400, n, replace=False) for n in (15, 12, 12)]
        res = weatkit.mac([targets[pick[0]]], [a1[pick[1]], a2[pick[2]]], n_bootstrap=400, seed=run)
        low, high = res.confidence_interval
        hits += low <= truth <= high
    assert hits / 100 >= 0.95


def test_one_thread_holds_blas_and_openmp_to_one_thread_and_restores_them() -> None:
    """A run measures its association metrics with one BLAS/OpenMP thread (small products);
    the thread counts of NumPy's BLAS and torch are given back on exit, and the numbers are those
    of the metrics called outside it, to rounding."""
    import torch
    from threadpoolctl import threadpool_info

    from weatkit.engine.device import one_thread

    before = {(p["user_api"], p["filepath"]): p["num_threads"] for p in threadpool_info()}
    torch_threads = torch.get_num_threads()
    rng = np.random.default_rng(2)
    T, A, B = rng.normal(size=(6, 20)), rng.normal(size=(7, 20)), rng.normal(size=(5, 20))
    free = weatkit.rnd(T, A, B, n_bootstrap=300)
    with one_thread():
        assert {p["num_threads"] for p in threadpool_info()} == {1}
        assert torch.get_num_threads() == 1
        held = weatkit.rnd(T, A, B, n_bootstrap=300)
    assert {(p["user_api"], p["filepath"]): p["num_threads"] for p in threadpool_info()} == before
    assert torch.get_num_threads() == torch_threads
    assert held.statistic == pytest.approx(free.statistic, rel=1e-12)
    np.testing.assert_allclose(held.bootstrap_statistic, free.bootstrap_statistic, rtol=1e-12)
