"""RND, the relative norm distance (Garg, Schiebinger, Jurafsky & Zou, PNAS 2018).

For target words v ∈ T (e.g. occupations) and two groups of attribute words A and B (e.g. words
for women and for men), with m_A and m_B the mean vectors of the groups::

    δ(v) = dist(v, m_A) − dist(v, m_B)
    RND  = Σ_{v∈T} δ(v)                       (reduction="sum", the paper)
         = (1/|T|) Σ_{v∈T} δ(v)                (reduction="mean", WEFE)

dist is the euclidean distance ‖v − m‖ (the paper) or, with ``distance="cosine"``, the cosine
distance 1 − cos(v, m). RND < 0: the targets are nearer to A than to B (A the stereotypically
associated group: the stereotypical side is *below* 0). ``normalize=True`` (the default) scales
every word vector to unit length first, as Garg et al.'s vectors are (their
``dataset_utilities/normalize_vectors.py``); the group means are not re-normalised.

**WEFE 1.0.1** (``wefe.metrics.RND``) takes the groups as its two *target* sets and the words v
as its one *attribute* set (the roles are swapped), averages δ over the words (``mean``), does not
normalise by default (``normalize=False``), and its ``distance="cos"`` is the cosine
*similarity* cos(v, m), as in Garg et al.'s ``calc_distance_between_vectors``: its cos-RND is
−1 times weatkit's ``distance="cosine", reduction="mean"``. Its ``"norm"`` is weatkit's
``"euclidean"``.

**Bootstrap** (:mod:`weatkit.association._common`): the sets T, A, B are resampled in this
order; each resample moves the group means, m_A* = Σ_a w_a a / Σ_a w_a, and re-weights the
targets, RND* = Σ_v w_v δ*(v) (divided by |T| for ``mean``), for all resamples at once.
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
    bootstrap_weights,
    check_choice,
    check_resampling,
    chunks,
    resampled,
    unit_weights,
)

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors

DISTANCES = ("euclidean", "cosine")
REDUCTIONS = ("sum", "mean")


@dataclass(frozen=True, kw_only=True)
class RndResult(AssociationResult):
    """RND with its bootstrap interval.

    Attributes:
        per_word: δ(v) = dist(v, m_A) − dist(v, m_B) for each target word.
        distance, reduction, normalize: how it was computed.
    """

    per_word: dict[str, float]
    distance: str
    reduction: str
    normalize: bool


def rnd(
    targets: WordSet,
    A: WordSet,
    B: WordSet,
    *,
    vectors: WordVectors | None = None,
    distance: str = "euclidean",
    reduction: str = "sum",
    normalize: bool = True,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> RndResult:
    """The relative norm distance of ``targets`` between the groups ``A`` and ``B``.

    Args:
        targets: the words v (e.g. occupations), words or an ``(n, dim)`` array.
        A, B: the two groups whose mean vectors the distances are taken to.
        vectors: the word vectors the words are looked up in.
        distance: ``euclidean`` (Garg et al.) or ``cosine`` (1 − cos).
        reduction: ``sum`` over the targets (Garg et al.) or ``mean`` (WEFE).
        normalize: unit vectors first (Garg et al.; WEFE's default is False).
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> T = np.array([[1.0, 0.0], [0.0, 1.0]])
        >>> res = rnd(T, np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), n_bootstrap=0)
        >>> round(res.statistic, 12), {v: round(d, 6) for v, d in res.per_word.items()}
        (0.0, {'0': -1.414214, '1': 1.414214})
    """
    check_resampling(n_bootstrap, confidence_level, seed)
    check_choice("distance", distance, DISTANCES)
    check_choice("reduction", reduction, REDUCTIONS)
    inputs = Inputs("rnd", vectors, normalize)
    t, a, b = inputs.one("targets", targets), inputs.one("A", A), inputs.one("B", B)
    sizes = (len(t), len(a), len(b))

    def statistic(weights: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        return weighted_rnd(t.rows, a.rows, b.rows, weights, distance, reduction == "mean")

    observed, per_word = statistic(unit_weights(sizes))
    boot = None
    if n_bootstrap:
        boot = statistic(bootstrap_weights(sizes, n_bootstrap, seed))[0]
    return RndResult(
        **resampled(observed[0], boot, n_bootstrap, confidence_level, seed),  # type: ignore[arg-type]
        per_word=dict(zip(t.words, per_word[:, 0].tolist(), strict=True)),
        distance=distance,
        reduction=reduction,
        normalize=normalize,
    )


def weighted_rnd(
    t: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    weights: Sequence[np.ndarray],
    distance: str,
    mean: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """RND of every resample ``(R,)`` and δ of every target in the first one ``(n_t, 1)``:
    ``weights`` are the counts of T, A and B, ``(R, n)`` each (the bootstrap's, the jackknife's
    or the null's: :mod:`weatkit.association.influence`, :mod:`weatkit.association.null`);
    ``mean`` divides by Σ_v w_v."""
    w_t, w_a, w_b = weights
    out = np.empty(w_t.shape[0])
    first = np.empty((len(t), 1))
    for part in chunks(w_t.shape[0], len(t) + t.shape[1]):
        m_a = w_a[part] @ a / w_a[part].sum(axis=1, keepdims=True)  # (r, dim)
        m_b = w_b[part] @ b / w_b[part].sum(axis=1, keepdims=True)
        delta = _distance(t, m_a, distance) - _distance(t, m_b, distance)  # (n_t, r)
        out[part] = (w_t[part] * delta.T).sum(axis=1) / (w_t[part].sum(axis=1) if mean else 1)
        if part.start == 0:
            first = delta[:, :1]
    return out, first


def _distance(t: np.ndarray, m: np.ndarray, distance: str) -> np.ndarray:
    """``(n_t, r)`` distances of every target to every mean."""
    dot = t @ m.T
    t_sq = (t * t).sum(axis=1)[:, None]
    m_sq = (m * m).sum(axis=1)[None, :]
    if distance == "cosine":
        return 1.0 - dot / np.sqrt(t_sq * m_sq)
    return np.sqrt(np.clip(t_sq + m_sq - 2.0 * dot, 0.0, None))
