"""The leave-one-out samples of a test, all from one matrix product: the engine's jackknife.

Leaving out item i of set K ∈ {X, Y, A, B} is the resample whose weights are all 1 except a 0 at
i (:func:`weatkit.stats.resampling.jackknife_weights`); the ``n_x + n_y + n_a + n_b``
leave-one-out samples of a test are the rows of one weight matrix, so their statistics S and
effect sizes d come from the similarities the engine has already computed
(:func:`weatkit.engine.association.weighted_statistics`). The engine uses them for the influence
of every item (:mod:`weatkit.engine.influence`) and for the jackknife of the BCa intervals.
Undefined values are NaN: an item that is the only one of its set, and an item of X or Y when
X∪Y without it has too few words for the standard deviation (n_x + n_y − 1 ≤ ddof).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from weatkit.engine.association import Weights, weighted_statistics
from weatkit.stats.resampling import Sizes, jackknife_weights

#: The sets of a test, in the order of the leave-one-out samples.
SET_NAMES = ("X", "Y", "A", "B")


def leave_one_out_blocks(sizes: Sequence[int]) -> list[np.ndarray]:
    """The leave-one-out samples of sets of ``sizes`` as count weights, one ``(R, n_j)`` block
    per set with ``R = Σ n_j`` rows: the first set's items left out first, then the next set's
    (each row all ones but one 0; :func:`weatkit.stats.resampling.jackknife_weights`). The
    association metrics take them as they take the bootstrap's counts
    (:mod:`weatkit.association.influence`)."""
    total = sum(sizes)
    blocks = []
    start = 0
    for n in sizes:
        block = np.ones((total, n))
        block[start : start + n] = jackknife_weights(n)
        blocks.append(block)
        start += n
    return blocks


def leave_one_out_weights(sizes: Sizes, like: torch.Tensor) -> Weights:
    """The weights of every leave-one-out sample of a test: ``R = n_x + n_y + n_a + n_b`` rows,
    X's items left out first, then Y's, A's and B's (:func:`leave_one_out_blocks`)."""
    return Weights(
        *(
            torch.as_tensor(block, dtype=like.dtype, device=like.device)
            for block in leave_one_out_blocks(sizes)
        )
    )


def leave_one_out(sim: torch.Tensor, sizes: Sizes, ddof: int) -> tuple[torch.Tensor, torch.Tensor]:
    """S and d of every leave-one-out sample, ``(T, n_x + n_y + n_a + n_b)`` each (columns in
    the order of :func:`leave_one_out_weights`); undefined ones NaN (module docstring).

    Args:
        sim: ``(T, n_x + n_y, n_a + n_b)`` similarities of the engine.
        sizes: ``(n_x, n_y, n_a, n_b)``.
        ddof: of the pooled standard deviation, as in the engine.
    """
    weights = leave_one_out_weights(sizes, sim)
    stat, eff = weighted_statistics(sim, sizes[0], sizes[2], weights, ddof)
    undefined = torch.as_tensor(_undefined(sizes, ddof), device=sim.device)
    nan = torch.tensor(float("nan"), dtype=sim.dtype, device=sim.device)
    return torch.where(undefined, nan, stat), torch.where(undefined, nan, eff)


def _undefined(sizes: Sizes, ddof: int) -> np.ndarray:
    """Which leave-one-out samples have an empty set or too few targets for the std."""
    flags = []
    for key, n in zip(SET_NAMES, sizes, strict=True):
        empty = n == 1
        too_few = key in "XY" and sizes[0] + sizes[1] - 1 - ddof <= 0
        flags.append(np.full(n, empty or too_few))
    return np.concatenate(flags)


def split_by_set(values: np.ndarray, sizes: Sizes) -> list[np.ndarray]:
    """``(T, Σn)`` leave-one-out values as four ``(T, n_set)`` arrays (X, Y, A, B)."""
    return np.split(values, np.cumsum(sizes)[:-1], axis=-1)
