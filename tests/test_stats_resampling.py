"""The one resampling module: every scheme's plan equals a slow, obvious draw with the same seed,
and the measures (WEAT engine, GEST, CrowS-Pairs, correlations) draw their plans from it."""

from __future__ import annotations

import numpy as np
import pytest

from weatkit.crows.score import bootstrap_indices as crows_bootstrap_indices
from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import resample_indices
from weatkit.stats.resampling import (
    BOOTSTRAP_SCHEMES,
    bootstrap_draws,
    bootstrap_indices,
    counts_from_indices,
    one_sample_bootstrap,
    padded_counts,
    permutation_plan,
)


def slow_draw(rng: np.random.Generator, sizes: list[int], n_resamples: int) -> list[np.ndarray]:
    """Item after item, resample after resample, set after set."""
    out = []
    for n in sizes:
        rows = [[int(rng.integers(0, n)) for _ in range(n)] for _ in range(n_resamples)]
        out.append(np.array(rows, dtype=np.int64).reshape(n_resamples, n))
    return out


def test_weat_scheme_is_keyed_on_seed_and_sizes() -> None:
    sizes = (4, 3, 5, 2)
    slow = slow_draw(np.random.default_rng([7, *sizes, 0]), list(sizes), 6)
    fast = list(bootstrap_draws(sizes, 6, seed=7, scheme="weat"))
    for a, b in zip(fast, slow, strict=True):
        np.testing.assert_array_equal(a, b)
    plan = bootstrap_indices(sizes, 6, 7)
    assert list(plan) == ["X", "Y", "A", "B"]
    for key, b in zip("XYAB", slow, strict=True):
        np.testing.assert_array_equal(plan[key], b)


def test_stratified_scheme_is_one_generator_from_the_seed() -> None:
    sizes = [5, 1, 3]
    slow = slow_draw(np.random.default_rng(11), sizes, 4)
    for fast in (
        list(bootstrap_draws(sizes, 4, seed=11, scheme="stratified")),
        list(resample_indices(sizes, 4, 11)),
    ):
        for a, b in zip(fast, slow, strict=True):
            np.testing.assert_array_equal(a, b)


def test_one_sample_bootstrap_serves_crows_and_correlations() -> None:
    slow = slow_draw(np.random.default_rng(3), [9], 8)[0]
    np.testing.assert_array_equal(one_sample_bootstrap(9, 8, seed=3), slow)
    np.testing.assert_array_equal(crows_bootstrap_indices(9, 8, 3), slow)


def test_plans_depend_only_on_seed_and_sizes() -> None:
    for scheme in BOOTSTRAP_SCHEMES:
        a = list(bootstrap_draws([4, 6], 5, seed=1, scheme=scheme))
        b = list(bootstrap_draws([4, 6], 5, seed=1, scheme=scheme))
        c = list(bootstrap_draws([4, 6], 5, seed=2, scheme=scheme))
        assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
        assert not all(np.array_equal(x, y) for x, y in zip(a, c, strict=True))
    # the engine's plans are keyed on the sizes too: other sizes, other first set
    x1 = bootstrap_indices((4, 4, 3, 3), 5, 1)["X"]
    x2 = bootstrap_indices((4, 4, 3, 4), 5, 1)["X"]
    assert not np.array_equal(x1, x2)


def test_random_permutation_plan_equals_a_slow_draw() -> None:
    n_x, n_y, sizes = 6, 6, (6, 6, 3, 3)
    plan = permutation_plan(n_x, n_y, 20, max_exact=10, seed=4, sizes=sizes)
    assert not plan.exact
    rng = np.random.default_rng([4, *sizes, 1])
    seen: list[tuple[int, ...]] = []
    while len(seen) < 20:  # distinct splits, in the order first drawn
        for _ in range(20 - len(seen)):
            row = tuple(int(v) for v in rng.permuted(np.array([1] * n_x + [0] * n_y)))
            if row not in seen:
                seen.append(row)
    np.testing.assert_array_equal(plan.membership, np.array(seen, dtype=np.uint8))


def test_unknown_scheme() -> None:
    with pytest.raises(WeatkitError, match="unknown bootstrap scheme 'paired'"):
        next(bootstrap_draws([3], 2, seed=0, scheme="paired"))  # type: ignore[arg-type]


def test_padded_counts_are_each_sets_counts_side_by_side() -> None:
    idx = bootstrap_indices((5, 3, 4, 2), 50, seed=7)
    widths = (6, 3, 4, 5)
    got = padded_counts([idx[k] for k in "XYAB"], widths)
    assert got.shape == (50, sum(widths))
    start = 0
    for k, n, width in zip("XYAB", (5, 3, 4, 2), widths, strict=True):
        np.testing.assert_array_equal(got[:, start : start + n], counts_from_indices(idx[k], n))
        assert not got[:, start + n : start + width].any()  # padding: never drawn
        start += width


@pytest.mark.parametrize(
    ("size", "need"),
    [(5, 2), (8, 3), (5, 3)],  # need² ≤ size; need ≤ size / 2; a permutation's first need
    ids=["whole-rows", "by-position", "permutation"],
)
def test_the_null_draws_every_ordered_subset_equally_often(size: int, need: int) -> None:
    """Each of null_plan's three ways to draw ``need`` distinct of ``size``: every row distinct,
    and the size!/(size − need)! ordered tuples equally likely (χ² goodness of fit)."""
    from math import perm

    from scipy.stats import chisquare

    from weatkit.stats.resampling import _distinct_rows

    cells = perm(size, need)
    rows = _distinct_rows(np.random.default_rng(7), size, need, 400 * cells)
    assert rows.shape == (400 * cells, need)
    assert (np.sort(rows, axis=1)[:, 1:] != np.sort(rows, axis=1)[:, :-1]).all()
    _, counts = np.unique(rows, axis=0, return_counts=True)
    assert len(counts) == cells
    assert chisquare(counts).pvalue > 1e-3
    # a draw that favours small positions would be seen: the first position's mean
    assert abs(rows[:, 0].mean() - (size - 1) / 2) < 0.05
