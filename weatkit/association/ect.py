"""ECT, the embedding coherence test (Dev & Phillips, AISTATS 2019).

For two target sets X and Y (e.g. male and female names) with mean vectors m_X and m_Y, and an
attribute set A (e.g. occupations)::

    u_a = cos(m_X, a),   v_a = cos(m_Y, a)        for every a ∈ A
    ECT = ρ_Spearman(u, v)                          (average ranks for ties)

ρ = 1: A is ordered alike by its similarity to both groups (no bias, the neutral value); the
lower ρ, the more the two groups' neighbourhoods among A differ (the stereotypical side is
*below* 1; ρ does not say towards which group). ``pvalue`` is
:func:`scipy.stats.spearmanr`'s (a t approximation) of the null ρ = 0, a null of independence
rather than of no bias. ``normalize=True`` scales every vector to unit length before the means.

**WEFE 1.0.1** (``wefe.metrics.ECT``) computes the same ρ (``1 − scipy.spatial.distance.cosine``
for u and v, ``spearmanr(...).correlation``), without its p, and does not normalise by default.

**Bootstrap** (:mod:`weatkit.association._common`): X, Y and A are resampled in this order; the
means m_X* = Σ w_x x / Σ w_x move, and ρ* is Spearman's ρ of the resampled attribute list with its
repeats (a word drawn k times is k tied entries, average ranks), for all resamples at once: the
rank of a word is #{drawn entries below it} + (#{drawn entries equal to it} + 1) / 2, and ρ* the
Pearson correlation of the ranks weighted by the counts. A resample whose u* or v* is constant
has no ρ (``n_undefined``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from weatkit.association._common import (
    N_BOOTSTRAP,
    AssociationResult,
    Inputs,
    WordSet,
    WordSets,
    bootstrap_weights,
    check_resampling,
    chunks,
    resampled,
)

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors

#: Fewest attribute words for a rank correlation with a p-value.
MIN_ATTRIBUTES = 3


@dataclass(frozen=True, kw_only=True)
class EctResult(AssociationResult):
    """ECT (Spearman's ρ) with its p-value and bootstrap interval.

    Attributes:
        pvalue: :func:`scipy.stats.spearmanr`'s two-sided p of ρ = 0.
        similarities: per attribute word, ``(cos(m_X, a), cos(m_Y, a))``.
    """

    pvalue: float
    similarities: dict[str, tuple[float, float]]


def ect(
    targets: WordSets,
    attributes: WordSet,
    *,
    vectors: WordVectors | None = None,
    normalize: bool = False,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> EctResult:
    """The embedding coherence test of two target sets over one attribute set.

    Args:
        targets: exactly two target sets (a list, or a mapping name -> set).
        attributes: the attribute words (at least 3).
        vectors: the word vectors the words are looked up in.
        normalize: unit vectors before the means (WEFE's default is False).
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> X, Y = np.array([[1.0, 0.1]]), np.array([[1.0, 0.2]])
        >>> A = np.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
        >>> ect([X, Y], A, n_bootstrap=0).statistic
        1.0
    """
    from scipy import stats

    check_resampling(n_bootstrap, confidence_level, seed)
    inputs = Inputs("ect", vectors, normalize)
    x, y = inputs.many("target sets", targets, exactly=2)
    a = inputs.one("attributes", attributes, at_least=MIN_ATTRIBUTES)
    u, v = (_cos_to_mean(s.rows, np.ones((1, len(s))), a.rows)[0] for s in (x, y))
    result = stats.spearmanr(u, v)
    boot = None
    if n_bootstrap:
        weights = bootstrap_weights((len(x), len(y), len(a)), n_bootstrap, seed)
        boot = weighted_ect(x.rows, y.rows, a.rows, weights)
    return EctResult(
        **resampled(result.statistic, boot, n_bootstrap, confidence_level, seed),  # type: ignore[arg-type]
        pvalue=float(result.pvalue),
        similarities={w: (float(p), float(q)) for w, p, q in zip(a.words, u, v, strict=True)},
    )


def weighted_ect(
    x: np.ndarray, y: np.ndarray, a: np.ndarray, weights: Sequence[np.ndarray]
) -> np.ndarray:
    """ρ* of every resample ``(R,)``: ``weights`` are the counts of X, Y and A, ``(R, n)`` each
    (the bootstrap's, the jackknife's or the null's)."""
    w_x, w_y, w_a = weights
    out = np.empty(len(w_x))
    for part in chunks(len(w_x), len(a) * (len(a) + 4) + 2 * a.shape[1] + w_x.shape[1]):
        u = _cos_to_mean(x, w_x[part], a)
        v = _cos_to_mean(y, w_y[part], a)
        out[part] = weighted_spearman(u, v, w_a[part])
    return out


def _cos_to_mean(rows: np.ndarray, weights: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``(R, n_a)`` cosines of each resample's weighted mean of ``rows`` to every attribute."""
    means = weights @ rows / weights.sum(axis=1, keepdims=True)
    dots = means @ a.T
    return dots / np.linalg.norm(means, axis=1)[:, None] / np.linalg.norm(a, axis=1)[None, :]


def weighted_spearman(u: np.ndarray, v: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row of ``(R, n)`` values, item i counted ``w[r, i]`` times.

    Equals :func:`scipy.stats.spearmanr` on the lists with each item repeated ``w[r, i]``
    times (ties: average ranks); NaN where a row's drawn values are constant.
    """
    ru, rv = _tied_ranks(u, w), _tied_ranks(v, w)
    total = w.sum(axis=1, keepdims=True)
    du = ru - (w * ru).sum(axis=1, keepdims=True) / total
    dv = rv - (w * rv).sum(axis=1, keepdims=True) / total
    num = (w * du * dv).sum(axis=1)
    den = np.sqrt((w * du * du).sum(axis=1) * (w * dv * dv).sum(axis=1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(den > 1e-12 * total[:, 0] ** 2, num / den, np.nan)


def _tied_ranks(values: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Average rank of each item among the drawn entries: below + (equal + 1) / 2."""
    below = ((values[:, None, :] < values[:, :, None]) * w[:, None, :]).sum(axis=2)
    equal = ((values[:, None, :] == values[:, :, None]) * w[:, None, :]).sum(axis=2)
    return below + (equal + 1.0) / 2.0
