"""The one resampling module: every bootstrap and permutation plan weatkit draws comes from here.

A plan is a set of indices drawn from a NumPy generator whose seed is built from the user's seed
(and, for the WEAT engine, the set sizes), so **a plan depends only on the seed and the set
sizes**: never on the data, the device, the batch, or the order in which tests are run.
Randomness is drawn on the CPU and moved to the compute device afterwards, so CPU and GPU see
the same resamples.

Bootstrap schemes (:data:`BOOTSTRAP_SCHEMES`). Each draws, for sets of sizes n_1 … n_k taken in
order, an ``(R, n_j)`` array of positions with replacement, ``rng.integers(0, n_j, (R, n_j))``,
from one generator ``rng``; they differ only in how ``rng`` is seeded, which each measure has
always used (so that no published number moves):

``"weat"``
    ``numpy.random.default_rng([seed, *sizes, 0])``. The WEAT engine (CA-WEAT paper §5): X, Y,
    A and B resampled independently with replacement. Every test of the same shape is resampled
    identically (common random numbers: a difference between two embeddings on the same lists is
    then paired over the same resamples).
``"stratified"``
    ``numpy.random.default_rng(seed)``. Per-stratum bootstrap, strata after one another: GEST
    redraws the samples of each stereotype (:func:`weatkit.gest.aggregate.aggregate_scores`).
    With a single stratum it is the plain (one-sample) bootstrap of :func:`one_sample_bootstrap`:
    per group for CrowS-Pairs (a fresh generator per bias type, so a group's interval does not
    depend on the other groups) and the *paired* bootstrap of the rank correlations (one draw of
    the units indexes both measures).

A resample is best used as a count matrix ``(R, n)`` (:func:`counts_from_indices`) so that the
statistics of all resamples come from matrix products (no loop over resamples).

Permutation test (Caliskan et al. 2017): the null distribution of S over equal-size re-splits of
X∪Y. Exact enumeration of all C(n_x+n_y, n_x) splits when there are at most ``max_exact`` of them;
otherwise ``n_permutations`` distinct random splits (sampled without replacement, as the XWEAT /
CA-WEAT code does) from ``numpy.random.default_rng([seed, *sizes, 1])``, with
p = (k + 1) / (B + 1) (Phipson & Smyth 2010).

Split halves (:func:`split_half_plan`; split-half reliability, :mod:`weatkit.validity`): of k
parallel forms, half A takes ⌊k/2⌋ and half B the rest. Every distinct split when there are at
most ``n_splits`` of them (C(k, ⌊k/2⌋), halved for even k since A|B and B|A are one split);
otherwise ``n_splits`` random splits from ``numpy.random.default_rng([seed, k, 3])`` (each a
random permutation of the forms, its first ⌊k/2⌋ in half A; repeats allowed).

Null baseline (:func:`null_plan`; Dobrzeniecka & Urbaniak 2024): K random target lists drawn
from a candidate vocabulary split into frequency bands, each drawn word from the band of the
target word it replaces, from ``numpy.random.default_rng([seed, n_targets, M, 2])`` (M the
number of candidates).

Context draws (:func:`context_draws`; CEAT, :mod:`weatkit.ceat`): N draws of one context per
word, the context of word j drawn uniformly from its c_j contexts, independently per word and
draw, from ``numpy.random.default_rng([seed, c_1, …, c_m, 4])``.
"""

from __future__ import annotations

import functools
import itertools
import math
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from scipy.special import ndtr

from weatkit.errors import ConfigError, DataError, WeatkitError

Sizes = tuple[int, int, int, int]
BootstrapScheme = Literal["weat", "stratified"]
#: The bootstrap schemes of :func:`bootstrap_draws` (module docstring).
BOOTSTRAP_SCHEMES: tuple[str, ...] = ("weat", "stratified")

_BOOTSTRAP_STREAM = 0
_PERMUTATION_STREAM = 1
_NULL_STREAM = 2
_SPLIT_STREAM = 3
_CONTEXT_STREAM = 4


def _rng(seed: int, sizes: Sequence[int], stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), *(int(n) for n in sizes), stream])


#: Bytes a bootstrap plan holds per drawn position: its int64 index and the float64 count
#: made from it (:func:`counts_from_indices`). A permutation plan holds one uint8 per item.
BOOTSTRAP_BYTES = 16


def check_plan_size(
    n_resamples: int,
    sizes: Sequence[int],
    *,
    field: str = "n_bootstrap",
    bytes_per_item: int = BOOTSTRAP_BYTES,
) -> None:
    """Refuse, before anything is allocated, a plan that cannot fit in this machine's memory.

    A plan of R resamples over sets of sizes n_1 … n_k holds at least
    ``bytes_per_item · R · Σ n_j`` bytes (16 for a bootstrap: an int64 position and a float64
    count per drawn item; 1 for the membership rows of a permutation plan). Every plan calls
    this first; option validators call it with sizes ``(1,)`` to refuse an absurd count before
    any work.

    Raises:
        ConfigError: the plan needs more than the machine's physical memory, naming the count
            (``field``) and the memory it would need.
    """
    n_items = sum(int(n) for n in sizes)
    needed = bytes_per_item * int(n_resamples) * n_items
    available = physical_memory()
    if needed > available:
        what = f"{int(n_resamples):,} resamples" + (
            f" of {n_items:,} items would need" if n_items > 1 else " would need at least"
        )
        raise ConfigError(
            f"{what} {format_bytes(needed)} of memory (this machine has "
            f"{format_bytes(available)}); choose fewer",
            field=field,
        )


def physical_memory() -> int:
    """Bytes of physical memory of this machine (``sysconf``; 1 TiB where it is unknown)."""
    try:
        return int(os.sysconf("SC_PAGE_SIZE")) * int(os.sysconf("SC_PHYS_PAGES"))
    except (AttributeError, OSError, ValueError):  # pragma: no cover - Windows
        return 1 << 40


def format_bytes(n: int) -> str:
    """``n`` bytes in binary units, e.g. ``21.8 TiB``."""
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024:
            return f"{value:.1f} {unit}"
        value /= 1024
    return f"{value:.1f} PiB"


def bootstrap_draws(
    sizes: Sequence[int], n_resamples: int, *, seed: int, scheme: BootstrapScheme
) -> Iterator[np.ndarray]:
    """The positions drawn by each resample, one ``(n_resamples, n_j)`` array per set in order.

    Row r of the j-th array lists the positions in set j drawn with replacement for resample r,
    ``rng.integers(0, n_j, size=(n_resamples, n_j))``, sets after one another from one
    generator seeded by ``scheme`` (module docstring). A generator: only one set's draws are in
    memory at a time.

    Example:
        >>> [a.shape for a in bootstrap_draws([3, 2], 4, seed=0, scheme="stratified")]
        [(4, 3), (4, 2)]
    """
    check_plan_size(n_resamples, sizes)
    if scheme == "weat":
        rng = _rng(seed, sizes, _BOOTSTRAP_STREAM)
    elif scheme == "stratified":
        rng = np.random.default_rng(int(seed))
    else:
        raise WeatkitError(
            f"unknown bootstrap scheme {scheme!r}: choose {', '.join(BOOTSTRAP_SCHEMES)}"
        )
    for n in sizes:
        yield rng.integers(0, n, size=(n_resamples, n))


def bootstrap_indices(sizes: Sizes, n_resamples: int, seed: int) -> dict[str, np.ndarray]:
    """The WEAT engine's plan (scheme ``"weat"``): ``{"X": (R, n_x), "Y": ..., "B": ...}``.

    Row r of ``"X"`` lists the positions in X drawn (with replacement) for resample r.
    """
    draws = bootstrap_draws(sizes, n_resamples, seed=seed, scheme="weat")
    return dict(zip("XYAB", draws, strict=True))


def one_sample_bootstrap(n: int, n_resamples: int, *, seed: int) -> np.ndarray:
    """``(n_resamples, n)`` positions of one set drawn with replacement (scheme
    ``"stratified"`` with one stratum): ``default_rng(seed).integers(0, n, (n_resamples, n))``.

    Used per group by CrowS-Pairs and, paired (the same rows index both measures), by the rank
    correlations of :mod:`weatkit.stats.correlation`.
    """
    return next(bootstrap_draws([n], n_resamples, seed=seed, scheme="stratified"))


def counts_from_indices(indices: np.ndarray, n: int) -> np.ndarray:
    """``(R, n)`` multiplicities of each item in each resample (a bincount per row)."""
    r = indices.shape[0]
    flat = (np.arange(r)[:, None] * n + indices).ravel()
    return np.bincount(flat, minlength=r * n).reshape(r, n).astype(np.float64)


def padded_counts(indices: Sequence[np.ndarray], widths: Sequence[int]) -> np.ndarray:
    """``(R, Σ widths)`` multiplicities of several sets side by side, set j's ``(R, n_j)``
    positions counted in its ``widths[j]`` columns (zero beyond n_j: padding no resample draws).

    One bincount for all sets; set by set it equals :func:`counts_from_indices` (as integers).

    Example:
        >>> padded_counts([np.array([[0, 0], [1, 0]]), np.array([[2, 0, 1]])[[0, 0]]], [3, 3])
        array([[2, 0, 0, 1, 1, 1],
               [1, 1, 0, 1, 1, 1]])
    """
    r, total = indices[0].shape[0], sum(widths)
    starts = np.cumsum([0, *widths[:-1]])
    flat = np.concatenate([idx + start for idx, start in zip(indices, starts, strict=True)], axis=1)
    flat += (np.arange(r) * total)[:, None]
    return np.bincount(flat.ravel(), minlength=r * total).reshape(r, total)


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
    if exact:
        check_plan_size(total, (n_x, n_y), field="max_exact", bytes_per_item=1)
    else:
        check_plan_size(n_permutations, (n_x, n_y), field="n_permutations", bytes_per_item=1)
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


def split_half_plan(n_forms: int, n_splits: int, *, seed: int) -> np.ndarray:
    """``(S, n_forms)`` 0/1 membership of half A in each split of ``n_forms`` parallel forms.

    Half A has ⌊k/2⌋ forms. Every distinct split (``exact``: in lexicographic order of half A,
    and, for even k, only those with form 0 in half A) when there are at most ``n_splits``;
    else ``n_splits`` random splits from ``default_rng([seed, k, 3])`` (module docstring).

    Example:
        >>> split_half_plan(4, 100, seed=0).tolist()
        [[1, 1, 0, 0], [1, 0, 1, 0], [1, 0, 0, 1]]
    """
    if n_forms < 2:
        raise DataError(f"a split-half needs at least 2 forms, got {n_forms}")
    if n_splits < 1:
        raise ConfigError(f"must be >= 1, got {n_splits}", field="n_splits")
    half = n_forms // 2
    distinct = math.comb(n_forms, half) // (2 if 2 * half == n_forms else 1)
    if distinct <= n_splits:
        combos = itertools.islice(itertools.combinations(range(n_forms), half), distinct)
        membership = np.zeros((distinct, n_forms), dtype=np.uint8)
        for row, combo in enumerate(combos):
            membership[row, list(combo)] = 1
        return membership
    check_plan_size(n_splits, (n_forms,), field="n_splits", bytes_per_item=1)
    rng = _rng(seed, (n_forms,), _SPLIT_STREAM)
    base = np.zeros(n_forms, dtype=np.uint8)
    base[:half] = 1
    return rng.permuted(np.tile(base, (n_splits, 1)), axis=1)


def context_draws(counts: Sequence[int], n_draws: int, *, seed: int) -> np.ndarray:
    """``(n_draws, m)`` int64: column j holds draw k's context of word j, uniform in
    ``[0, counts[j])`` (module docstring); it depends only on the seed and the counts.

    Example:
        >>> context_draws([3, 1, 2], 2, seed=0).tolist()
        [[2, 0, 1], [2, 0, 0]]
    """
    sizes = [int(c) for c in counts]
    if n_draws < 2:
        raise ConfigError(f"must be >= 2, got {n_draws}", field="n_draws")
    if not sizes or min(sizes) < 1:
        raise DataError("every word needs at least one context to be drawn")
    check_plan_size(n_draws, (len(sizes),), field="n_draws", bytes_per_item=8)
    rng = _rng(seed, sizes, _CONTEXT_STREAM)
    return rng.integers(0, np.asarray(sizes, dtype=np.int64), size=(n_draws, len(sizes)))


def null_plan(
    candidate_bands: np.ndarray,
    target_bands: Sequence[int],
    n_draws: int,
    *,
    seed: int,
    exclude: Sequence[int] = (),
) -> np.ndarray:
    """Random target lists matched in frequency band: ``(n_draws, n)`` candidate positions.

    Column j of row k is the word that replaces target j (of band ``target_bands[j]``) in draw
    k: a candidate of the same band, ``candidate_bands[c] == target_bands[j]``. Within a row
    every position is distinct (the words of one draw are drawn without replacement), and the
    positions in ``exclude`` (the test's own words) are never drawn.

    The draw: one generator ``numpy.random.default_rng([seed, n, M, 2])`` (n = len(
    target_bands), M = len(candidate_bands)); bands in increasing order; for band b with pool
    P_b (its candidates, ascending, less ``exclude``) and m_b targets, each row draws m_b
    distinct members of P_b (uniformly: all ordered m_b-subsets are equally likely), assigned
    to the band's targets in their order:

    * m_b² ≤ |P_b|: ``rng.integers(0, |P_b|, (rows, m_b))``, redrawn whole for the rows with a
      repeat (a repeat is then unlikely: probability below about 1/2);
    * m_b ≤ |P_b| / 2: position by position, ``rng.integers(0, |P_b|, rows)`` for position j,
      redrawn for the rows where it repeats one of positions 0 … j − 1 (rejection: position j
      is uniform over the members not yet drawn, fewer than two tries each on average);
    * else the first m_b of a random permutation, ``argsort(rng.random((K, |P_b|)))[:, :m_b]``.

    So the plan depends only on the seed, the sizes and the candidate bands.

    Raises:
        DataError: ``n_draws < 1``, or a band with fewer candidates than targets, naming the
            band (the caller adds the test).

    Example:
        >>> bands = np.array([0, 0, 0, 1, 1, 1, 1])
        >>> plan = null_plan(bands, [0, 1, 1], 4, seed=0, exclude=[3])
        >>> plan.shape, bool((bands[plan] == [0, 1, 1]).all()), bool((plan != 3).all())
        ((4, 3), True, True)
    """
    if n_draws < 1:
        raise DataError(f"the null baseline needs at least 1 draw, got {n_draws}")
    candidate_bands = np.asarray(candidate_bands)
    targets = np.asarray(target_bands, dtype=np.int64)
    check_plan_size(n_draws, (len(targets),), field="null")
    rng = _rng(seed, (len(targets), len(candidate_bands)), _NULL_STREAM)
    available = np.ones(len(candidate_bands), dtype=bool)
    available[np.asarray(exclude, dtype=np.int64)] = False
    plan = np.empty((n_draws, len(targets)), dtype=np.int64)
    for band in np.unique(targets):
        columns = np.flatnonzero(targets == band)
        pool = np.flatnonzero((candidate_bands == band) & available)
        need = len(columns)
        if len(pool) < need:
            raise DataError(
                f"frequency band {band} has {len(pool)} candidate word(s) for {need} target "
                "word(s); the vocabulary is too small for the bands"
            )
        plan[:, columns] = pool[_distinct_rows(rng, len(pool), need, n_draws)]
    return plan


def _distinct_rows(rng: np.random.Generator, size: int, need: int, n_rows: int) -> np.ndarray:
    """``(n_rows, need)`` positions in ``range(size)``, distinct within each row (see
    :func:`null_plan`)."""
    if need * need > size:
        return _distinct_by_position(rng, size, need, n_rows)
    rows = rng.integers(0, size, (n_rows, need))
    while True:
        ordered = np.sort(rows, axis=1)
        repeated = np.flatnonzero((ordered[:, 1:] == ordered[:, :-1]).any(axis=1))
        if len(repeated) == 0:
            return rows
        rows[repeated] = rng.integers(0, size, (len(repeated), need))


def _distinct_by_position(
    rng: np.random.Generator, size: int, need: int, n_rows: int
) -> np.ndarray:
    """The last two cases of :func:`null_plan`'s draw: by position while ``need`` ≤ size / 2
    (O(rows · need²) comparisons), else a permutation's first ``need`` (O(rows · size))."""
    if 2 * need > size:
        return np.argsort(rng.random((n_rows, size)), axis=1)[:, :need]
    rows = np.empty((n_rows, need), dtype=np.int64)
    for j in range(need):
        column = rng.integers(0, size, n_rows)
        redraw = np.flatnonzero((rows[:, :j] == column[:, None]).any(axis=1))
        while len(redraw):
            column[redraw] = rng.integers(0, size, len(redraw))
            redraw = redraw[(rows[redraw, :j] == column[redraw, None]).any(axis=1)]
        rows[:, j] = column
    return rows


def pvalue_from_normal(
    sums: np.ndarray, sums_sq: np.ndarray, n_resamples: int, alternative: str
) -> np.ndarray:
    """p-values of S under a normal fitted to its null statistics S_i (sent-bias's parametric
    test, May et al. 2019), from ``sums`` = Σ_i (S_i − S) and ``sums_sq`` = Σ_i (S_i − S)² over
    the N = ``n_resamples`` re-splits (centred on S: no cancellation in float64)::

        mean − S = Σ (S_i − S) / N,   sd² = (Σ (S_i − S)² − (Σ (S_i − S))² / N) / (N − 1)
        z = (S − mean) / sd,   greater: 1 − Φ(z),   less: Φ(z),   two-sided: min(1, 2 min)

    (``scipy.stats.norm.sf(S, mean, sd)`` for ``greater``). NaN where sd is 0 or N < 2.
    """
    n = float(n_resamples)
    with np.errstate(invalid="ignore", divide="ignore"):
        var = (sums_sq - sums**2 / n) / (n - 1)
        z = -(sums / n) / np.sqrt(np.maximum(var, 0.0))
    z = np.where((var > 0) & (n > 1), z, np.nan)
    p_greater, p_less = ndtr(-z), ndtr(z)
    if alternative == "greater":
        return p_greater
    if alternative == "less":
        return p_less
    return np.minimum(1.0, 2.0 * np.minimum(p_greater, p_less))


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
