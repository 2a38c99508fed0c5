"""The association metrics on frequency-matched random target words (``weatkit run --null K``).

The null plan is WEAT's (:mod:`weatkit.engine.null`): draw k = 1 … K replaces every word of X and
Y by a random candidate of its frequency band (the plan depends only on the seed, the set sizes
and the candidate bands), A and B are kept. A metric's null is its statistic θ_k on
(X'_k, Y'_k, A, B), for the metrics whose statistic reads X and Y::

    metric       θ_k                                            batched as
    rnd          RND of A (or B) between the groups X'_k, Y'_k  the drawn words are the groups'
                                                                rows, each draw their counts
    rnsb         RNSB of the sets X'_k, Y'_k                     one classifier (A, B do not
                                                                change): p of every drawn word
    mac          MAC of X'_k, Y'_k to A, B                      cosines of the drawn words once
    ect          ECT of X'_k, Y'_k over A (or B)                the groups' means per draw
    sc_weat      ES of the word replacing the row's word        ES of every drawn word once
    ripa         not defined: the statistic reads A, B and the pairs, not X and Y
    direct_bias  not defined: as RIPA

Each metric computes θ_k from count weights over the drawn words, as its bootstrap does
(``weighted_rnd``, ``weighted_mac``, ``weighted_ect``, :func:`~weatkit.association.sc_weat.
word_effects`, RNSB's ``kl_to_uniform``), the draws in chunks of about 4 million numbers. A draw
with a word that has no vector (a model that cannot encode it) gives NaN.

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

from weatkit.association._common import Inputs, cosines
from weatkit.stats.resampling import counts_from_indices

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.association.options import AssociationOptions
    from weatkit.association.query import Query
    from weatkit.engine.null import NullSample
    from weatkit.engine.weat import EngineOptions

#: The association metrics with a null (their statistic reads X and Y).
NULL_METRICS = ("rnd", "rnsb", "mac", "ect", "sc_weat")
_MEMORY_BUDGET = 2**22  # numbers per chunk of draws


def _chunks(sample: NullSample) -> Iterator[tuple[slice, np.ndarray, np.ndarray, np.ndarray]]:
    """Per chunk of draws: its slice, the rows of the words it draws ``(n_l, dim)`` and the
    counts of X'_k and Y'_k over them ``(k, n_l)`` each (a missing word counts as the first
    row: its draw is NaN'd by :func:`_defined`)."""
    assert sample.vectors is not None
    n_draws, n = sample.rows.shape
    step = max(1, math.isqrt(max(_MEMORY_BUDGET // max(n, 1), 1)))
    for start in range(0, n_draws, step):
        part = slice(start, min(start + step, n_draws))
        used, local = np.unique(sample.rows[part].clip(min=0), return_inverse=True)
        local = local.reshape(-1, n)
        table = np.asarray(sample.vectors[used], dtype=np.float64)
        counts_x = counts_from_indices(local[:, : sample.n_x], len(used))
        counts_y = counts_from_indices(local[:, sample.n_x :], len(used))
        yield part, table, counts_x, counts_y


def _defined(sample: NullSample, values: np.ndarray) -> np.ndarray:
    """``values`` with NaN for the draws that have a word without a vector."""
    return np.where((sample.rows < 0).any(axis=1), np.nan, values)


def _unit(rows: np.ndarray) -> np.ndarray:
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def rnd_null(sample: NullSample, query: Query, key: str, options: AssociationOptions) -> np.ndarray:
    """RND of set ``key`` between the groups X'_k and Y'_k of every draw ``(K,)``."""
    from weatkit.association.rnd import weighted_rnd

    t = Inputs("rnd", query.vectors, options.rnd_normalize).one(key, query.sets[key]).rows
    out = np.empty(len(sample.rows))
    for part, table, wx, wy in _chunks(sample):
        rows = _unit(table) if options.rnd_normalize else table
        w_t = np.ones((len(wx), len(t)))
        mean = options.rnd_reduction == "mean"
        out[part] = weighted_rnd(t, rows, rows, [w_t, wx, wy], "euclidean", mean)[0]
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
        inputs, neg.rows, pos.rows, engine.seed, options.rnsb_holdout, CLASSIFIER
    )
    out = np.empty(len(sample.rows))
    for part, table, wx, wy in _chunks(sample):
        p = prob_negative(model, table)
        both = np.concatenate([p, p])  # X' over the drawn words, then Y'
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
    out = np.empty(len(sample.rows))
    for part, table, wx, wy in _chunks(sample):
        dist = [np.concatenate([1.0 - cosines(table, s.rows)] * 2) for s in (a, b)]
        ones = [np.ones((len(wx), len(s))) for s in (a, b)]
        out[part] = weighted_mac(dist, 2, [wx, wy, *ones])[0]
    return _defined(sample, out)


def ect_null(sample: NullSample, query: Query, key: str) -> np.ndarray:
    """ECT of X'_k and Y'_k over set ``key`` of every draw ``(K,)``."""
    from weatkit.association.ect import MIN_ATTRIBUTES, weighted_ect

    inputs = Inputs("ect", query.vectors, normalize=False)
    a = inputs.one(key, query.sets[key], at_least=MIN_ATTRIBUTES).rows
    out = np.empty(len(sample.rows))
    for part, table, wx, wy in _chunks(sample):
        out[part] = weighted_ect(table, table, a, [wx, wy, np.ones((len(wx), len(a)))])
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
    assert sample.vectors is not None
    used, local = np.unique(sample.rows.clip(min=0), return_inverse=True)
    table = np.asarray(sample.vectors[used], dtype=np.float64)
    ones = (np.ones((1, len(a))), np.ones((1, len(b))))
    effect = word_effects(cosines(table, attributes), len(a), *ones, engine.ddof)[1][:, 0]
    drawn = effect[local.reshape(sample.rows.shape)]
    out = {}
    for key, offset in (("X", 0), ("Y", sample.n_x)):
        for word in dict.fromkeys(query.sets[key]):
            j = offset + list(query.sets[key]).index(word)
            out[(key, word)] = _defined(sample, drawn[:, j])
    return out
