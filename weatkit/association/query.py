"""The association metrics on a WEAT-style test (X, Y, A, B), as rows of ``association.csv``.

Which sets each metric takes (WEFE's roles, Badilla et al. 2020: X and Y are the two groups
compared, each attribute set A, B the words measured against them; RNSB and MAC take all four
at once; SC-WEAT measures every target word; RIPA and DirectBias take the test's definitional
pairs instead of X and Y)::

    metric       row (set)   call                                              reads as WEAT's
                                                                               hypothesis (X~A)
    rnd          A, B        rnd(targets=A|B, A=X, B=Y)                        A: < 0, B: > 0
    rnsb         all         rnsb(targets=[X, Y], negative=B, positive=A)      > 0 (unsigned)
    mac          all         mac(targets=[X, Y], attributes=[A, B])            none (a distance)
    ect          A, B        ect(targets=[X, Y], attributes=A|B)               < 1 (unsigned)
    ripa         A, B        ripa(targets=[A, B], pairs)                       A: > 0, B: < 0
    direct_bias  A, B        direct_bias(targets=A|B, pairs)                   > 0 (unsigned)
    sc_weat      X, Y        sc_weat(w, A, B) for every word w of X and Y      X: > 0, Y: < 0

(RIPA's and DirectBias's sign: with pairs ``(x, y)`` whose x words go with X, as ``(he, she)``
with X male names.) Each row has the statistic, its bootstrap percentile interval and, for ECT
and SC-WEAT, a p-value; ``association_items.csv`` has what each metric gives per word: RND's
δ(v) and RIPA's β(w) for the words of A and B, DirectBias's cos(w, g), RNSB's negative
probability p(t), MAC's mean cosine distance of the words of X and Y, and ECT's cos(m_X, a)
and cos(m_Y, a) of the words a of A and B (set ``A:X``, ``A:Y``, ``B:X``, ``B:Y``: the
attribute set, then the target set of the mean).

The words are those the test keeps after out-of-vocabulary removal and equalisation; the pairs
those whose two words are in the vocabulary (their coverage must reach ``min_coverage``). The
bootstrap is the run's (``n_bootstrap``, ``confidence_level``, ``seed``; RNSB's at most
``rnsb_bootstrap``), SC-WEAT's permutation test the engine's (``n_permutations``,
``max_exact``, ``alternative``, ``ddof``). A metric that cannot take the test (ECT with fewer
than three attribute words, RIPA without pairs, ...) is not an error: it is skipped with a
one-line reason naming the metric and the test (:class:`Skip`).

With the run's ``influence`` each row also gets every word's leave-one-out influence
(:mod:`weatkit.association.influence`), and with a null (``Query.null``) its null summary,
for the metrics that read X and Y (:mod:`weatkit.association.null`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from weatkit.association import influence as infl
from weatkit.association import null as nul
from weatkit.association._common import Query, standard_error
from weatkit.association.options import AssociationOptions
from weatkit.engine.null import NO_NULL, summarize_null
from weatkit.errors import WeatkitError

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.engine.weat import EngineOptions

#: Why RIPA and DirectBias are skipped on a test without pairs.
NO_PAIRS = "no definitional pairs (give its list file a pairs section)"


@dataclass(frozen=True)
class Skip:
    """A metric not computed on a test: ``reason`` names both; ``cause`` is the reason
    without the test (the same for every test skipped for it)."""

    metric: str
    reason: str
    cause: str


@dataclass
class Measured:
    """What the metrics gave on one test: rows of ``association.csv``, of
    ``association_items.csv`` and, with ``--influence``, of ``association_influence.csv``
    (without the test's keys), and the metrics skipped."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    items: list[dict[str, Any]] = field(default_factory=list)
    influence: list[dict[str, Any]] = field(default_factory=list)
    skipped: list[Skip] = field(default_factory=list)


def measure_query(
    query: Query,
    metrics: Sequence[str],
    options: AssociationOptions,
    engine: EngineOptions,
) -> Measured:
    """Every association metric of ``metrics`` (``weat`` is the engine's: left out) on
    ``query`` (module docstring). A run measures its queries with one BLAS thread
    (:func:`~weatkit.engine.device.one_thread`, in :mod:`weatkit.pipeline.metrics`)."""
    out = Measured()
    for metric in metrics:
        if metric == "weat":
            continue
        try:
            _METRICS[metric](query, options, engine, out)
        except WeatkitError as err:
            cause = str(err).removeprefix(f"{metric}: ")
            out.skipped.append(Skip(metric, f"{metric} on {query.label}: {cause}", cause))
    return out


# ---------------------------------------------------------------------------------------------
# one function per metric: adds its rows and items to ``out``


def _rnd(query: Query, options: AssociationOptions, engine: EngineOptions, out: Measured) -> None:
    from weatkit.association.rnd import rnd

    for key in ("A", "B"):
        res = rnd(
            query.sets[key],
            query.sets["X"],
            query.sets["Y"],
            vectors=query.vectors,
            reduction=options.rnd_reduction,
            normalize=options.rnd_normalize,
            **_bootstrap(engine),
        )
        null = None if query.null is None else nul.rnd_null(query.null, query, key, options)
        out.rows.append(_row(query, "rnd", key, res, engine=engine, null=null))
        out.items += _items("rnd", key, res.per_word)
        if engine.influence:
            out.influence += infl.rnd_influence(query, key, options)


def _rnsb(query: Query, options: AssociationOptions, engine: EngineOptions, out: Measured) -> None:
    from weatkit.association.rnsb import rnsb

    plan = _bootstrap(engine)
    plan["n_bootstrap"] = min(plan["n_bootstrap"], options.rnsb_bootstrap)
    res = rnsb(
        {"X": query.sets["X"], "Y": query.sets["Y"]},
        query.sets["B"],
        query.sets["A"],
        vectors=query.vectors,
        over=options.rnsb_over,
        holdout=options.rnsb_holdout,
        **plan,
    )
    null = None if query.null is None else nul.rnsb_null(query.null, query, options, engine)
    out.rows.append(_row(query, "rnsb", "all", res, engine=engine, null=null))
    for key in ("X", "Y"):
        out.items += _items("rnsb", key, {w: res.negative_probability[w] for w in query.sets[key]})
    if engine.influence:
        out.influence += infl.rnsb_influence(query, options, engine)


def _mac(query: Query, options: AssociationOptions, engine: EngineOptions, out: Measured) -> None:
    from weatkit.association.mac import mac

    res = mac(
        {"X": query.sets["X"], "Y": query.sets["Y"]},
        {"A": query.sets["A"], "B": query.sets["B"]},
        vectors=query.vectors,
        **_bootstrap(engine),
    )
    null = None if query.null is None else nul.mac_null(query.null, query)
    out.rows.append(_row(query, "mac", "all", res, engine=engine, null=null))
    if engine.influence:
        out.influence += infl.mac_influence(query)
    for key in ("X", "Y"):
        mean = {w: float(np.mean(list(s.values()))) for w, s in res.distances[key].items()}
        out.items += _items("mac", key, mean)


def _ect(query: Query, options: AssociationOptions, engine: EngineOptions, out: Measured) -> None:
    from weatkit.association.ect import ect

    for key in ("A", "B"):
        try:
            res = ect(
                {"X": query.sets["X"], "Y": query.sets["Y"]},
                query.sets[key],
                vectors=query.vectors,
                **_bootstrap(engine),
            )
        except WeatkitError as err:  # the other attribute set may still be measured
            cause = str(err).removeprefix("ect: ")
            out.skipped.append(Skip("ect", f"ect on {query.label}, set {key}: {cause}", cause))
            continue
        null = None if query.null is None else nul.ect_null(query.null, query, key)
        out.rows.append(_row(query, "ect", key, res, res.pvalue, engine=engine, null=null))
        for side, mean in enumerate(("X", "Y")):
            cos = {word: pair[side] for word, pair in res.similarities.items()}
            out.items += _items("ect", f"{key}:{mean}", cos)
        if engine.influence:
            out.influence += infl.ect_influence(query, key)


def _ripa(query: Query, options: AssociationOptions, engine: EngineOptions, out: Measured) -> None:
    from weatkit.association.ripa import ripa

    pairs = _pairs(query)
    res = ripa(
        {"A": query.sets["A"], "B": query.sets["B"]},
        pairs,
        vectors=query.vectors,
        relation=options.ripa_relation,
        **_bootstrap(engine),
    )
    for key in ("A", "B"):
        ci = res.per_set_ci[key]
        row = _row(query, "ripa", key, res, n_pairs=len(pairs))
        row.update(
            statistic=res.per_set[key], ci_low=_low(ci), ci_high=_high(ci), se=res.per_set_se[key]
        )
        out.rows.append(row)
        out.items += _items("ripa", key, res.per_word[key])
        if engine.influence:
            out.influence += infl.ripa_influence(query, key, pairs, options)


def _direct_bias(
    query: Query, options: AssociationOptions, engine: EngineOptions, out: Measured
) -> None:
    from weatkit.association.direct_bias import direct_bias

    pairs = _pairs(query)
    for key in ("A", "B"):
        res = direct_bias(query.sets[key], pairs, vectors=query.vectors, **_bootstrap(engine))
        out.rows.append(_row(query, "direct_bias", key, res, n_pairs=len(pairs)))
        out.items += _items("direct_bias", key, res.per_word)
        if engine.influence:
            out.influence += infl.direct_bias_influence(query, key, pairs)


def _sc_weat(
    query: Query, options: AssociationOptions, engine: EngineOptions, out: Measured
) -> None:
    from weatkit.association.sc_weat import sc_weat_words

    nulls = {} if query.null is None else nul.sc_weat_null(query.null, query, engine)
    for key in ("X", "Y"):
        words = list(dict.fromkeys(query.sets[key]))
        results = sc_weat_words(
            words,
            query.sets["A"],
            query.sets["B"],
            vectors=query.vectors,
            ddof=engine.ddof,
            alternative=engine.alternative,
            n_permutations=engine.n_permutations,
            max_exact=engine.max_exact,
            **_bootstrap(engine),
        )
        for word, res in results.items():
            null = nulls.get((key, word))
            row = _row(query, "sc_weat", key, res, res.pvalue, engine=engine, null=null)
            out.rows.append({**row, "item": word})
        if engine.influence:
            out.influence += infl.sc_weat_influence(query, key, words, engine)


_METRICS: dict[str, Callable[[Query, AssociationOptions, EngineOptions, Measured], None]] = {
    "rnd": _rnd,
    "rnsb": _rnsb,
    "mac": _mac,
    "ect": _ect,
    "ripa": _ripa,
    "sc_weat": _sc_weat,
    "direct_bias": _direct_bias,
}


# ---------------------------------------------------------------------------------------------
# shared pieces


def _bootstrap(engine: EngineOptions) -> dict[str, Any]:
    return {
        "n_bootstrap": engine.n_bootstrap,
        "confidence_level": engine.confidence_level,
        "seed": engine.seed,
    }


def _pairs(query: Query) -> list[tuple[str, str]]:
    """The test's pairs in the vocabulary; a :class:`WeatkitError` (a skip) without any, or with
    too few of them."""
    if not query.pairs:
        raise WeatkitError(NO_PAIRS)
    wv = query.vectors
    kept = [p for p in dict.fromkeys(query.pairs) if p[0] in wv and p[1] in wv]
    coverage = len(kept) / len(set(query.pairs))
    if not kept or coverage + 1e-9 < query.min_coverage:
        missing = [f"{x}-{y}" for x, y in query.pairs if (x, y) not in kept]
        raise WeatkitError(
            f"{len(kept)} of {len(set(query.pairs))} definitional pairs in the vocabulary "
            f"(minimum coverage {100 * query.min_coverage:.0f}%; missing: "
            f"{', '.join(missing[:5])}{' ...' if len(missing) > 5 else ''})"
        )
    return kept


def _row(
    query: Query,
    metric: str,
    key: str,
    res: Any,
    pvalue: float | None = None,
    n_pairs: int | None = None,
    *,
    engine: EngineOptions | None = None,
    null: np.ndarray | None = None,
) -> dict[str, Any]:
    """One row of ``association.csv``: with ``null`` (the statistic on the null's draws) its
    summary against the statistic (:func:`weatkit.engine.null.summarize_null`), else NaN."""
    ci = res.confidence_interval
    summary = dict(NO_NULL)
    if null is not None and engine is not None:
        summary = summarize_null(null, res.statistic, engine.alternative).columns()
    return {
        "metric": metric,
        "set": key,
        "item": "",
        "statistic": res.statistic,
        "ci_low": _low(ci),
        "ci_high": _high(ci),
        "se": standard_error(res.bootstrap_statistic),
        "p_value": math.nan if pvalue is None else float(pvalue),
        **summary,
        **{f"n_{k.lower()}": len(query.sets[k]) for k in ("X", "Y", "A", "B")},
        "n_pairs": n_pairs,
        "n_bootstrap": res.n_bootstrap,
        "n_undefined": res.n_undefined,
    }


def _low(ci: tuple[float, float] | None) -> float:
    return math.nan if ci is None else ci[0]


def _high(ci: tuple[float, float] | None) -> float:
    return math.nan if ci is None else ci[1]


def _items(metric: str, key: str, values: Mapping[str, float]) -> list[dict[str, Any]]:
    return [
        {"metric": metric, "set": key, "item": word, "value": float(value)}
        for word, value in values.items()
    ]
