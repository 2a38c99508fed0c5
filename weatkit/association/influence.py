"""Which words drive each association metric: the leave-one-out influence of every word
(``weatkit run --influence``, the ``association_influence`` table; its columns are
:data:`weatkit.report.tables.ASSOCIATION_INFLUENCE_COLUMNS`).

For a row of ``association.csv`` (a metric's statistic θ on one test, one set or one word) and
every word i of every set K that θ reads (Antoniak & Mimno 2021; Du et al. 2021, as WEAT's d in
:mod:`weatkit.engine.influence`)::

    θ_without(K, i) = θ with the word i left out of K
    delta(K, i)     = θ_without(K, i) − θ

Batched as WEAT's: leaving out item i of K is the resample whose count weights are all 1 except
a 0 at i (:func:`weatkit.engine.leave_one_out.leave_one_out_blocks`, the engine's jackknife),
and every metric already computes its statistic from such weights for its bootstrap
(``weighted_rnd``, ``weighted_mac``, ... of each metric's module), so all the leave-one-out
values of a row come from one call, with the similarities computed once::

    metric       row          sets whose words are left out   how
    rnd          A, B         that set, X, Y                  the group means X, Y move
    rnsb         all          X, Y, A, B                      X, Y re-weighted; a word of A or B:
                                                              the classifier refit without it
    mac          all          X, Y, A, B
    ect          A, B         X, Y, that set                  ρ of the weighted ranks
    ripa         A, B         that set, pairs                 b recomputed without the pair
    direct_bias  A, B         that set, pairs                 g recomputed without the pair
    sc_weat      X, Y (word)  A, B                            the word's ES without the word

A pair is named ``x-y`` in set ``pairs``. RNSB's refits use the run's seed (and, with
``rnsb_holdout``, the split of the attribute words without the word, which moves with it; a
split that cannot be made leaves the value undefined). Every
metric has a per-word decomposition, so every metric takes ``--influence``. Undefined values are
NaN, never an error: a word alone in its set (the set would be empty), and whatever the metric
cannot compute without the word (a constant ECT ranking, for instance).

Exactness: θ_without is the metric's public function on the lists with the word removed
(``tests/test_association_robustness.py`` checks each against that loop), except where that
function refuses the reduced lists (ECT with fewer than 3 attribute words still has a ρ here).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from weatkit.association._common import Inputs, Query, Vectors, cosines, unit_weights
from weatkit.engine.leave_one_out import leave_one_out_blocks
from weatkit.errors import WeatkitError

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.association.options import AssociationOptions
    from weatkit.engine.weat import EngineOptions

#: A statistic of every resample ``(R,)`` from the count weights of its sets.
Statistic = Callable[[list[np.ndarray]], np.ndarray]


def leave_one_out_rows(
    metric: str,
    row: tuple[str, str],
    sets: Sequence[Vectors],
    statistic: Statistic,
    report: Sequence[str] | None = None,
) -> list[dict[str, Any]]:
    """The influence rows of one association row: ``statistic`` under the unit weights (θ) and
    under every leave-one-out weight of ``sets`` (in their order), the rows of the sets named
    in ``report`` (None: all). A word alone in its set gets NaN."""
    sizes = [len(s) for s in sets]
    with np.errstate(invalid="ignore", divide="ignore"):
        observed = float(statistic(unit_weights(sizes))[0])
        values = np.asarray(statistic(leave_one_out_blocks(sizes)), dtype=float)
    out, start = [], 0
    for s in sets:
        block = values[start : start + len(s)] if len(s) > 1 else np.full(len(s), np.nan)
        start += len(s)
        if report is not None and s.name not in report:
            continue
        out += [
            {
                "metric": metric,
                "row_set": row[0],
                "row_item": row[1],
                "set": s.name,
                "item": word,
                "statistic_without": float(v),
                "delta": float(v) - observed,
            }
            for word, v in zip(s.words, block, strict=True)
        ]
    return out


def rnd_influence(query: Query, key: str, options: AssociationOptions) -> list[dict[str, Any]]:
    """RND's row ``key`` (A or B): its words, X's and Y's (the groups)."""
    from weatkit.association.rnd import weighted_rnd

    inputs = Inputs("rnd", query.vectors, options.rnd_normalize)
    t, x, y = (inputs.one(k, query.sets[k]) for k in (key, "X", "Y"))
    mean = options.rnd_reduction == "mean"

    def statistic(w: list[np.ndarray]) -> np.ndarray:
        return weighted_rnd(t.rows, x.rows, y.rows, w, "euclidean", mean)[0]

    return leave_one_out_rows("rnd", (key, ""), [t, x, y], statistic)


def rnsb_influence(
    query: Query, options: AssociationOptions, engine: EngineOptions
) -> list[dict[str, Any]]:
    """RNSB's row: the words of X and Y (re-weighted), of A (positive) and B (negative): the
    classifier refit without the word, one fit per attribute word."""
    from weatkit.association.rnsb import (
        CLASSIFIER,
        fit_classifier,
        kl_to_uniform,
        prob_negative,
        unchecked,
    )

    inputs = Inputs("rnsb", query.vectors, normalize=False)
    x, y, pos, neg = (inputs.one(k, query.sets[k]) for k in "XYAB")
    rows = np.concatenate([x.rows, y.rows])
    fitted: dict[bytes, np.ndarray] = {}

    def probability(w_pos: np.ndarray, w_neg: np.ndarray) -> np.ndarray:
        key = w_pos.tobytes() + w_neg.tobytes()
        if key not in fitted:
            try:
                model, _ = fit_classifier(
                    inputs,
                    np.repeat(neg.rows, w_neg.astype(int), axis=0),
                    np.repeat(pos.rows, w_pos.astype(int), axis=0),
                    engine.seed,
                    options.rnsb_holdout,
                    CLASSIFIER,
                    score=False,
                )
            except WeatkitError:  # the holdout cannot split the words left: undefined
                fitted[key] = np.full(len(rows), np.nan)
            else:
                fitted[key] = prob_negative(model, rows)
        return fitted[key]

    def statistic(w: list[np.ndarray]) -> np.ndarray:
        w_x, w_y, w_pos, w_neg = w
        return np.array(
            [
                kl_to_uniform(
                    probability(w_pos[r], w_neg[r]),
                    [w_x[r : r + 1], w_y[r : r + 1]],
                    options.rnsb_over,
                )[0]
                for r in range(len(w_x))
            ]
        )

    with unchecked():  # CLASSIFIER's parameters, finite vectors (Inputs checks them)
        return leave_one_out_rows("rnsb", ("all", ""), [x, y, pos, neg], statistic)


def mac_influence(query: Query) -> list[dict[str, Any]]:
    """MAC's row: the words of X, Y, A and B."""
    from weatkit.association.mac import weighted_mac

    inputs = Inputs("mac", query.vectors, normalize=False)
    x, y, a, b = (inputs.one(k, query.sets[k]) for k in "XYAB")
    targets = np.concatenate([x.rows, y.rows])
    dist = [1.0 - cosines(targets, s.rows) for s in (a, b)]  # once

    def statistic(w: list[np.ndarray]) -> np.ndarray:
        return weighted_mac(dist, 2, w)[0]

    return leave_one_out_rows("mac", ("all", ""), [x, y, a, b], statistic)


def ect_influence(query: Query, key: str) -> list[dict[str, Any]]:
    """ECT's row ``key`` (A or B): the words of X, Y (the means) and of that set (the ranks)."""
    from weatkit.association.ect import MIN_ATTRIBUTES, weighted_ect

    inputs = Inputs("ect", query.vectors, normalize=False)
    x, y = inputs.one("X", query.sets["X"]), inputs.one("Y", query.sets["Y"])
    a = inputs.one(key, query.sets[key], at_least=MIN_ATTRIBUTES)

    def statistic(w: list[np.ndarray]) -> np.ndarray:
        return weighted_ect(x.rows, y.rows, a.rows, w)

    return leave_one_out_rows("ect", (key, ""), [x, y, a], statistic)


def ripa_influence(
    query: Query, key: str, pairs: list[tuple[str, str]], options: AssociationOptions
) -> list[dict[str, Any]]:
    """RIPA's row ``key`` (A or B, the set's mean β): that set's words and the pairs."""
    from weatkit.association._pairs import differences
    from weatkit.association.ripa import weighted_ripa

    inputs = Inputs("ripa", query.vectors, normalize=False)
    a, b = inputs.one("A", query.sets["A"]), inputs.one("B", query.sets["B"])
    px, py = inputs.pairs(pairs)
    d = differences(inputs, px, py)
    rows = np.concatenate([a.rows, b.rows])
    index = 1 if key == "A" else 2  # the per-set means follow the pooled one

    def statistic(w: list[np.ndarray]) -> np.ndarray:
        return weighted_ripa(rows, d, w, options.ripa_relation)[0][index]

    sets = [a, b, Vectors("pairs", px.words, px.rows)]
    return leave_one_out_rows("ripa", (key, ""), sets, statistic, report=(key, "pairs"))


def direct_bias_influence(
    query: Query, key: str, pairs: list[tuple[str, str]]
) -> list[dict[str, Any]]:
    """DirectBias's row ``key`` (A or B): that set's words and the pairs."""
    from weatkit.association._pairs import differences
    from weatkit.association.direct_bias import weighted_direct_bias

    inputs = Inputs("direct_bias", query.vectors, normalize=True)
    t = inputs.one(key, query.sets[key])
    px, py = inputs.pairs(pairs)
    d = differences(inputs, px, py)
    unit = t.rows / np.linalg.norm(t.rows, axis=1, keepdims=True)

    def statistic(w: list[np.ndarray]) -> np.ndarray:
        return weighted_direct_bias(unit, d, w, 1.0)[0]

    sets = [t, Vectors("pairs", px.words, px.rows)]
    return leave_one_out_rows("direct_bias", (key, ""), sets, statistic)


def sc_weat_influence(
    query: Query, key: str, words: Sequence[str], engine: EngineOptions
) -> list[dict[str, Any]]:
    """SC-WEAT's rows of ``words`` (of set ``key``): each word's ES without each word of A, B."""
    from weatkit.association.sc_weat import word_effects

    inputs = Inputs("sc_weat", query.vectors, normalize=False)
    w = inputs.one(key, list(words))
    a, b = inputs.one("A", query.sets["A"]), inputs.one("B", query.sets["B"])
    sim = cosines(w.rows, np.concatenate([a.rows, b.rows]))  # once, for every word
    out = []
    for i, word in enumerate(w.words):

        def statistic(weights: list[np.ndarray], i: int = i) -> np.ndarray:
            return word_effects(sim[i : i + 1], len(a), *weights, engine.ddof)[1][0]

        out += leave_one_out_rows("sc_weat", (key, word), [a, b], statistic)
    return out
