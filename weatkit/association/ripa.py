"""RIPA, the relational inner product association (Ethayarajh, Duvenaud & Hirst, ACL 2019).

For definitional pairs S = {(x_i, y_i)} (e.g. (woman, man), (she, he)) and a relation vector b,
a unit vector, the association of a word w is (Definition 3 of the paper)::

    β(w; b) = ⟨w, b⟩        b = first principal component of {x_i − y_i}

and a target set's association is the mean of β over its words. β > 0: w lies towards the x
words (the stereotypical side is *above* 0 when x is the stereotypically associated member of
each pair). The word vectors are used as they are (an inner product, not a cosine: RIPA is
meant to scale with the word's norm); ``normalize=True`` scales them to unit length first.

``relation`` chooses b (:mod:`weatkit.association._pairs`): ``pca`` (the default, the paper),
computed as the principal component of the pair-centred vectors that Bolukbasi et al. use (the
differences are not centred again; with one pair b = (x − y)/‖x − y‖), or ``mean``, the mean of
the unit differences (x_i − y_i)/‖x_i − y_i‖, which is what **WEFE 1.0.1** computes
(``wefe.metrics.RIPA``): it pairs its two target sets word by word, scores every word of its
one attribute set against each pair's unit difference and averages, which is β with that mean
vector; its ``result`` is the mean over the words. ``statistic`` here is the mean over all
target words (WEFE's ``result`` when the words are one set), ``per_set`` the mean of each set.

**Bootstrap** (:mod:`weatkit.association._common`): the target sets and then the pairs are
resampled, in this order; b is recomputed for every resample from the resampled pairs (all
resamples at once) and the targets re-weighted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from weatkit.association._common import (
    N_BOOTSTRAP,
    AssociationResult,
    Inputs,
    Pairs,
    WordSets,
    bootstrap_weights,
    check_choice,
    check_resampling,
    interval,
    resampled,
    standard_error,
    unit_weights,
)
from weatkit.association._pairs import RELATIONS, differences, directions

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors


@dataclass(frozen=True, kw_only=True)
class RipaResult(AssociationResult):
    """RIPA with its bootstrap interval.

    Attributes:
        per_set: the mean β of each target set; per_set_ci: their intervals (None without the
            bootstrap); per_set_se: their bootstrap standard errors (NaN without).
        per_word: β(w; b) per target set and word.
        relation: ``pca`` or ``mean``; relation_vector: b.
        explained_variance: the share of the pairs' variance along b (``pca``; NaN for
            ``mean``).
    """

    per_set: dict[str, float]
    per_set_ci: dict[str, tuple[float, float] | None]
    per_set_se: dict[str, float]
    per_word: dict[str, dict[str, float]]
    relation: str
    explained_variance: float
    relation_vector: np.ndarray = field(repr=False)


def ripa(
    targets: WordSets,
    pairs: Pairs,
    *,
    vectors: WordVectors | None = None,
    relation: str = "pca",
    normalize: bool = False,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> RipaResult:
    """The mean RIPA of the target words on the relation the definitional pairs define.

    Args:
        targets: one or more target sets (a list, or a mapping name -> set).
        pairs: the definitional pairs ``(x, y)``, or two row-aligned ``(n, dim)`` arrays.
        vectors: the word vectors the words are looked up in.
        relation: ``pca`` (the paper) or ``mean`` (WEFE).
        normalize: unit vectors first.
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> x, y = np.array([[2.0, 0.0]]), np.array([[0.0, 0.0]])
        >>> res = ripa([np.array([[3.0, 1.0], [-1.0, 5.0]])], (x + 1, y + 1), n_bootstrap=0)
        >>> res.statistic, res.per_word["target set 1"]
        (1.0, {'0': 3.0, '1': -1.0})
    """
    check_resampling(n_bootstrap, confidence_level, seed)
    check_choice("relation", relation, RELATIONS)
    inputs = Inputs("ripa", vectors, normalize)
    t_sets = inputs.many("target sets", targets)
    x, y = inputs.pairs(pairs)
    d = differences(inputs, x, y)
    rows = np.concatenate([t.rows for t in t_sets])
    sizes = [*(len(t) for t in t_sets), len(d)]

    observed, beta, b = weighted_ripa(rows, d, unit_weights(sizes), relation)
    boot = None
    if n_bootstrap:
        boot = weighted_ripa(rows, d, bootstrap_weights(sizes, n_bootstrap, seed), relation)[0]
    per_word, start = {}, 0
    for t in t_sets:
        per_word[t.name] = dict(zip(t.words, beta[start : start + len(t), 0].tolist(), strict=True))
        start += len(t)
    return RipaResult(
        **resampled(  # type: ignore[arg-type]
            observed[0, 0], None if boot is None else boot[0], n_bootstrap, confidence_level, seed
        ),
        per_set={t.name: float(v) for t, v in zip(t_sets, observed[1:, 0], strict=True)},
        per_set_ci={
            t.name: None if boot is None else interval(boot[1 + k], confidence_level)[0]
            for k, t in enumerate(t_sets)
        },
        per_set_se={
            t.name: standard_error(None if boot is None else boot[1 + k])
            for k, t in enumerate(t_sets)
        },
        per_word=per_word,
        relation=relation,
        explained_variance=float(directions(d, np.ones((1, len(d))), relation)[1][0]),
        relation_vector=b[0],
    )


def weighted_ripa(
    rows: np.ndarray, d: np.ndarray, weights: list[np.ndarray], relation: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pooled and per-set mean β ``(1 + m, R)``, β ``(N_t, R)`` and b ``(R, dim)`` of every
    resample: ``rows`` the target sets' rows one after the other, ``d`` the pairs' differences,
    ``weights`` the counts of each target set and then of the pairs (the bootstrap's or the
    jackknife's)."""
    b, _ = directions(d, weights[-1], relation)
    beta = rows @ b.T
    sums, counts, start = [], [], 0
    for w in weights[:-1]:
        sums.append((beta[start : start + w.shape[1]] * w.T).sum(axis=0))
        counts.append(w.sum(axis=1))
        start += w.shape[1]
    pooled = sum(sums) / sum(counts)
    return np.vstack([pooled, *(s / n for s, n in zip(sums, counts, strict=True))]), beta, b
