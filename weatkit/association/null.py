"""The association metrics on frequency-matched random target words (``weatkit run --null K``).

The null plan is WEAT's (:mod:`weatkit.engine.null`): draw k = 1 … K replaces every word of X and
Y by a random candidate of its frequency band (the plan depends only on the seed, the set sizes
and the candidate bands), A and B are kept. A metric's null is its statistic θ_k on
(X'_k, Y'_k, A, B), for the metrics whose statistic reads X and Y::

    metric       θ_k                                            batched as
    rnd          RND of A (or B) between the groups X'_k, Y'_k  each draw's group means, one
                                                                row per draw
    rnsb         RNSB of the sets X'_k, Y'_k                     one classifier (A, B do not
                                                                change): p of every drawn word
    mac          MAC of X'_k, Y'_k to A, B                      cosines of the drawn words once,
                                                                each draw their counts
    ect          ECT of X'_k, Y'_k over A (or B)                as RND
    sc_weat      ES of the word replacing the row's word        ES of every drawn word once
    ripa         not defined: the statistic reads A, B and the pairs, not X and Y
    direct_bias  not defined: as RIPA

Each metric computes θ_k with the weighted statistic its bootstrap uses (``weighted_rnd``,
``weighted_mac``, ``weighted_ect``, :func:`~weatkit.association.sc_weat.word_effects`, RNSB's
``kl_to_uniform``), the draws in chunks: MAC and RNSB weight the words a chunk draws by their
counts in each draw; RND and ECT read a group only through its mean, so each draw's group is
its mean row with weight 1. A draw with a word that has no vector (a model that cannot encode
it) gives NaN.

The summary is WEAT's (:func:`weatkit.engine.null.summarize_null`): ``null_mean``, ``null_sd``,
``null_percentile`` = 100 · #{θ_k ≤ θ} / K' and ``p_null`` = (k + 1) / (K' + 1) with the run's
``alternative`` read on the statistic as it is (``greater``: θ larger than random words'), as
SC-WEAT's permutation p reads it: RND (A's row) and ECT put the stereotypical side *below*, so
read their ``null_percentile``, or run ``--alternative two-sided``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from weatkit.association._common import Inputs, Query, cosines
from weatkit.stats.resampling import counts_from_indices

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.association.options import AssociationOptions
    from weatkit.engine.null import NullSample
    from weatkit.engine.weat import EngineOptions

#: The association metrics with a null (their statistic reads X and Y).
NULL_METRICS = ("rnd", "rnsb", "mac", "ect", "sc_weat")
#: Entries of a chunk's count matrices: k draws of n words count over up to k·n words, so the
#: work grows with k²·n; small chunks keep it near the K·n words drawn.
_CHUNK_BUDGET = 2**16


def _drawn(sample: NullSample) -> tuple[np.ndarray, np.ndarray]:
    """The rows of every word the test's draws use ``(n_u, dim)`` and the draws as positions
    among them ``(K, n_x + n_y)`` (a missing word is the first row: :func:`_defined` NaNs its
    draw)."""
    assert sample.vectors is not None
    used, inverse = np.unique(sample.rows.clip(min=0), return_inverse=True)
    table = np.asarray(sample.vectors[used], dtype=np.float64)
    return table, inverse.reshape(sample.rows.shape)


def _chunks(
    sample: NullSample, draws: np.ndarray
) -> Iterator[tuple[slice, np.ndarray, np.ndarray, np.ndarray]]:
    """Per chunk of draws: its slice, the positions (among :func:`_drawn`'s rows) of the
    words it draws ``(n_l,)`` and the counts of X'_k and Y'_k over them ``(k, n_l)`` each."""
    n_draws, n = draws.shape
    step = max(1, math.isqrt(max(_CHUNK_BUDGET // max(n, 1), 1)))
    for start in range(0, n_draws, step):
        part = slice(start, min(start + step, n_draws))
        used, local = np.unique(draws[part], return_inverse=True)
        local = local.reshape(-1, n)
        counts_x = counts_from_indices(local[:, : sample.n_x], len(used))
        counts_y = counts_from_indices(local[:, sample.n_x :], len(used))
        yield part, used, counts_x, counts_y


def _defined(sample: NullSample, values: np.ndarray) -> np.ndarray:
    """``values`` with NaN for the draws that have a word without a vector."""
    return np.where((sample.rows < 0).any(axis=1), np.nan, values)


def _group_means(
    table: np.ndarray, draws: np.ndarray, n_x: int
) -> Iterator[tuple[slice, np.ndarray, np.ndarray, np.ndarray]]:
    """Per chunk of draws: its slice, the mean rows of X'_k and of Y'_k ``(k, dim)`` each, and
    the identity weights ``(k, k)`` under which they are the chunk's groups (RND and ECT read a
    group through its weighted mean only: one row per draw, weight 1 on its own draw)."""
    step = max(1, math.isqrt(_CHUNK_BUDGET))
    for start in range(0, len(draws), step):
        part = slice(start, min(start + step, len(draws)))
        mx = table[draws[part, :n_x]].mean(axis=1)
        my = table[draws[part, n_x:]].mean(axis=1)
        yield part, mx, my, np.eye(len(mx))


def rnd_null(sample: NullSample, query: Query, key: str, options: AssociationOptions) -> np.ndarray:
    """RND of set ``key`` between the groups X'_k and Y'_k of every draw ``(K,)``."""
    from weatkit.association.rnd import weighted_rnd

    t = Inputs("rnd", query.vectors, options.rnd_normalize).one(key, query.sets[key]).rows
    table, draws = _drawn(sample)
    if options.rnd_normalize:
        table = table / np.linalg.norm(table, axis=1, keepdims=True)
    mean = options.rnd_reduction == "mean"
    out = np.empty(len(draws))
    for part, mx, my, eye in _group_means(table, draws, sample.n_x):
        w_t = np.ones((len(eye), len(t)))
        out[part] = weighted_rnd(t, mx, my, [w_t, eye, eye], "euclidean", mean)[0]
    return _defined(sample, out)


def rnsb_null(
    sample: NullSample, query: Query, options: AssociationOptions, engine: EngineOptions
) -> np.ndarray:
    """RNSB of the target sets X'_k, Y'_k of every draw ``(K,)``, with the classifier of the
    test's A (positive) and B (negative) words."""
    from weatkit.association.rnsb import CLASSIFIER, fit_classifier, kl_to_uniform, prob_negative

    inputs = Inputs("rnsb", query.vectors, normalize=False)
    pos, neg = inputs.one("A", query.sets["A"]), inputs.one("B", query.sets["B"])
    model, _ = fit_classifier(
        inputs, neg.rows, pos.rows, engine.seed, options.rnsb_holdout, CLASSIFIER, score=False
    )
    table, draws = _drawn(sample)
    p = prob_negative(model, table)  # every drawn word at once
    out = np.empty(len(draws))
    for part, used, wx, wy in _chunks(sample, draws):
        both = np.concatenate([p[used], p[used]])  # X' over the chunk's words, then Y'
        out[part] = [
            kl_to_uniform(both, [wx[r : r + 1], wy[r : r + 1]], options.rnsb_over)[0]
            for r in range(len(wx))
        ]
    return _defined(sample, out)


def mac_null(sample: NullSample, query: Query) -> np.ndarray:
    """MAC of X'_k and Y'_k to A and B of every draw ``(K,)``."""
    from weatkit.association.mac import weighted_mac

    inputs = Inputs("mac", query.vectors, normalize=False)
    a, b = inputs.one("A", query.sets["A"]), inputs.one("B", query.sets["B"])
    table, draws = _drawn(sample)
    dist = [1.0 - cosines(table, s.rows) for s in (a, b)]  # every drawn word at once
    out = np.empty(len(draws))
    for part, used, wx, wy in _chunks(sample, draws):
        both = [np.concatenate([d[used], d[used]]) for d in dist]  # X', then Y'
        ones = [np.ones((len(wx), len(s))) for s in (a, b)]
        out[part] = weighted_mac(both, 2, [wx, wy, *ones])[0]
    return _defined(sample, out)


def ect_null(sample: NullSample, query: Query, key: str) -> np.ndarray:
    """ECT of X'_k and Y'_k over set ``key`` of every draw ``(K,)``."""
    from weatkit.association.ect import MIN_ATTRIBUTES, weighted_ect

    inputs = Inputs("ect", query.vectors, normalize=False)
    a = inputs.one(key, query.sets[key], at_least=MIN_ATTRIBUTES).rows
    table, draws = _drawn(sample)
    out = np.empty(len(draws))
    for part, mx, my, eye in _group_means(table, draws, sample.n_x):
        out[part] = weighted_ect(mx, my, a, [eye, eye, np.ones((len(eye), len(a)))])
    return _defined(sample, out)


def sc_weat_null(
    sample: NullSample, query: Query, engine: EngineOptions
) -> dict[tuple[str, str], np.ndarray]:
    """Per SC-WEAT row (set, word): the ES of the words drawn in its place ``(K,)`` (a word
    given twice in its set: those of its first place)."""
    from weatkit.association.sc_weat import word_effects

    inputs = Inputs("sc_weat", query.vectors, normalize=False)
    a, b = inputs.one("A", query.sets["A"]), inputs.one("B", query.sets["B"])
    attributes = np.concatenate([a.rows, b.rows])
    table, draws = _drawn(sample)
    ones = (np.ones((1, len(a))), np.ones((1, len(b))))
    effect = word_effects(cosines(table, attributes), len(a), *ones, engine.ddof)[1][:, 0]
    drawn = effect[draws]  # every drawn word's ES, computed once
    out = {}
    for key, offset in (("X", 0), ("Y", sample.n_x)):
        for word in dict.fromkeys(query.sets[key]):
            j = offset + list(query.sets[key]).index(word)
            out[(key, word)] = _defined(sample, drawn[:, j])
    return out
