"""Resampling plans: bootstrap draws and permutation splits, generated once and shared.

Randomness is drawn on the CPU with NumPy from a seed derived from ``(seed, n_x, n_y, n_a, n_b)``
and then moved to the compute device, so CPU and GPU see the same resamples and every test of the
same shape is resampled identically (common random numbers: a difference between two embeddings
on the same lists is then paired over the same resamples).

Bootstrap (CA-WEAT paper §5): X, Y, A and B are resampled independently with replacement. A
resample is stored as a count matrix ``(R, n)`` so that statistics of all resamples come from
matrix products (see :mod:`weatkit.engine.association`).

Permutation test (Caliskan et al. 2017): the null distribution of S over equal-size re-splits of
X∪Y. Exact enumeration of all C(n_x+n_y, n_x) splits when there are at most ``max_exact`` of them;
otherwise ``n_permutations`` distinct random splits (sampled without replacement, as the XWEAT /
CA-WEAT code does) with p = (k + 1) / (B + 1) (Phipson & Smyth 2010).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass

import numpy as np

Sizes = tuple[int, int, int, int]

_BOOTSTRAP_STREAM = 0
_PERMUTATION_STREAM = 1


def _rng(seed: int, sizes: Sizes, stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), *sizes, stream])


def bootstrap_indices(sizes: Sizes, n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """The items drawn by each bootstrap resample: ``{"X": (R, n_x), "Y": ..., "B": ...}``.

    Row r of ``"X"`` lists the positions in X drawn (with replacement) for resample r.
    """
    rng = _rng(seed, sizes, _BOOTSTRAP_STREAM)
    return {
        key: rng.integers(0, n, size=(n_resamples, n)) for key, n in zip("XYAB", sizes, strict=True)
    }


def counts_from_indices(indices: np.ndarray, n: int) -> np.ndarray:
    """``(R, n)`` multiplicities of each item in each resample (a bincount per row)."""
    r = indices.shape[0]
    flat = (np.arange(r)[:, None] * n + indices).ravel()
    return np.bincount(flat, minlength=r * n).reshape(r, n).astype(np.float64)


def jackknife_weights(n: int) -> np.ndarray:
    """``(n, n)`` weights leaving out one item per row."""
    return 1.0 - np.eye(n)


def n_splits(n_x: int, n_y: int) -> int:
    """Number of ways to re-split X∪Y into sets of sizes n_x and n_y."""
    return math.comb(n_x + n_y, n_x)


@dataclass(frozen=True)
class PermutationPlan:
    """Membership of X in each re-split: ``(P, n_x + n_y)`` 0/1 matrix; ``exact`` if complete."""

    membership: np.ndarray
    exact: bool

    @property
    def n(self) -> int:
        return int(self.membership.shape[0])


def permutation_plan(
    n_x: int, n_y: int, n_permutations: int, max_exact: int, seed: int, sizes: Sizes
) -> PermutationPlan:
    """Every split when there are at most ``max_exact`` (or no more than asked for), else
    ``n_permutations`` distinct random splits."""
    total = n_splits(n_x, n_y)
    exact = total <= max_exact or total <= n_permutations
    packed = (
        _all_splits(n_x, n_y) if exact else _random_splits(n_x, n_y, n_permutations, seed, sizes)
    )
    return PermutationPlan(np.unpackbits(packed, axis=1, count=n_x + n_y), exact)


# Plans are cached bit-packed (8 items a byte): drawing and de-duplicating splits costs more
# than the test itself, and the jobs of a grid share list shapes. At most 32 exact plans (each
# under 2.2 MB: fewer than 10⁶ splits of at most 22 items at the default max_exact) and 128
# random ones (70 kB for 10,000 splits of 50 items).


@functools.lru_cache(maxsize=32)
def _all_splits(n_x: int, n_y: int) -> np.ndarray:
    """Every split of X∪Y, in lexicographic order of the X positions, bit-packed."""
    n = n_x + n_y
    total = n_splits(n_x, n_y)
    combos = np.fromiter(
        itertools.chain.from_iterable(itertools.combinations(range(n), n_x)),
        dtype=np.int64,
        count=total * n_x,
    ).reshape(total, n_x)
    membership = np.zeros((total, n), dtype=np.uint8)
    np.put_along_axis(membership, combos, 1, axis=1)
    return np.packbits(membership, axis=1)


@functools.lru_cache(maxsize=128)
def _random_splits(n_x: int, n_y: int, n_permutations: int, seed: int, sizes: Sizes) -> np.ndarray:
    """``n_permutations`` distinct random splits, in the order first drawn, bit-packed."""
    rng = _rng(seed, sizes, _PERMUTATION_STREAM)
    base = np.zeros(n_x + n_y, dtype=np.uint8)
    base[:n_x] = 1
    rows = np.empty((0, n_x + n_y), dtype=np.uint8)
    while rows.shape[0] < n_permutations:
        need = n_permutations - rows.shape[0]
        fresh = rng.permuted(np.tile(base, (need, 1)), axis=1)
        rows = np.concatenate([rows, fresh])
        _, first = np.unique(_row_keys(rows), return_index=True)
        rows = rows[np.sort(first)]
    return np.packbits(rows, axis=1)


def clear_plan_cache() -> None:
    """Forget the cached permutation plans (they are drawn again on next use)."""
    _all_splits.cache_clear()
    _random_splits.cache_clear()


def _row_keys(rows: np.ndarray) -> np.ndarray:
    """One sortable scalar per 0/1 row (its packed bits), equal exactly for equal rows."""
    packed = np.packbits(rows, axis=1)
    width = -(-packed.shape[1] // 8) * 8
    padded = np.zeros((len(rows), width), dtype=np.uint8)
    padded[:, : packed.shape[1]] = packed
    if width == 8:
        return padded.view(np.uint64).ravel()
    return np.ascontiguousarray(padded).view(np.dtype((np.void, width))).ravel()


def pvalue_from_counts(
    n_greater_equal: np.ndarray,
    n_less_equal: np.ndarray,
    n_resamples: int,
    exact: bool,
    alternative: str,
) -> np.ndarray:
    """p-values from the counts of null statistics at least / at most as extreme as observed.

    Exact: p = k / N over all N splits (the observed split is one of them). Monte Carlo:
    p = (k + 1) / (B + 1). Two-sided: min(1, 2 min(p_greater, p_less)), as in
    ``scipy.stats.permutation_test``.
    """
    if exact:
        p_greater = n_greater_equal / n_resamples
        p_less = n_less_equal / n_resamples
    else:
        p_greater = (n_greater_equal + 1) / (n_resamples + 1)
        p_less = (n_less_equal + 1) / (n_resamples + 1)
    if alternative == "greater":
        return p_greater
    if alternative == "less":
        return p_less
    return np.minimum(1.0, 2.0 * np.minimum(p_greater, p_less))
