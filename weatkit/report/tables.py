"""Tidy result tables, the CA-WEAT summary, and their exports (CSV, JSON, Parquet, Markdown).

``results`` — one row per embeddings × list × test:

==========================  ===========================================================
embeddings, lang,           which embeddings, language, list set (``ca-weat:v1``, ...),
list_set, list_id, test     list id (``en_US1``) and test id (``weat1``)
n_x, n_y, n_a, n_b          set sizes after OOV removal (and equalisation)
n_oov                       out-of-vocabulary items removed (all four sets)
coverage                    lowest per-set coverage (found / distinct items)
statistic                   S = Σ_X s − Σ_Y s (Caliskan et al. 2017)
statistic_ci_low/high       bootstrap CI of S (empty with ``--bootstrap 0``)
effect_size                 Cohen's d with the chosen ddof
effect_size_ci_low/high     bootstrap CI of d
effect_size_se              bootstrap standard error of d: SD (ddof 1) of its bootstrap
                            distribution (empty with ``--bootstrap 0``)
p_value                     permutation p-value of S (empty with ``--permutations 0``)
p_holm                      p_value adjusted by Holm's step-down (family-wise error rate)
q_bh                        p_value adjusted by Benjamini–Hochberg (false discovery rate)
sign_stability              share of bootstrap resamples whose d has the observed d's sign
null_mean, null_sd          mean and SD (ddof 1) of d over K frequency-matched random target
                            lists (``--null K``; empty without it; :mod:`weatkit.engine.null`)
null_percentile             100 · #{null d ≤ d} / K: the observed d's percentile in the null
p_null                      (k + 1) / (K + 1), k the null d's at least as extreme as d in the
                            direction of ``alternative`` (two-sided: twice the smaller tail)
null_k                      K, the null draws with a defined d
permutation_method          ``exact`` or ``monte-carlo``
n_permutations              re-splits used for the p-value
oov_items                   the removed items, ``SET:item`` separated by spaces
==========================  ===========================================================

``p_holm`` and ``q_bh`` are adjusted over one family: every test of the table with a p-value,
i.e. all tests of one ``weatkit run``, or of one ``weatkit grid`` (all its jobs together);
tests without a p-value are left out and get none (:mod:`weatkit.stats.multiplicity`).

``influence`` (``weatkit run --influence``) — one row per item of each test: the test's keys,
``set`` (X, Y, A or B), ``item``, ``d_without`` (d with the item left out) and ``delta``
(d_without − d); see :mod:`weatkit.engine.influence`.

``null`` (``weatkit run --null K``) — one row per draw of each test's null baseline: the test's
keys, ``draw`` (1 … K) and ``d`` (the draw's effect size); see :mod:`weatkit.engine.null`.

``association`` (``weatkit run --metrics rnd,ripa,...``) — one row per metric and test (per
attribute set or target word where the metric gives one per set or word:
:mod:`weatkit.association.query` says which sets each metric takes):

==========================  ===========================================================
embeddings, lang,           the test (as in ``results``)
list_set, list_id, test
metric                      ``rnd``, ``rnsb``, ``mac``, ``ect``, ``ripa``, ``sc_weat`` or
                            ``direct_bias`` (:data:`weatkit.association.options.METRICS`)
set                         the set the row measures: ``A`` or ``B`` (RND, ECT, RIPA,
                            DirectBias: the words of that attribute set), ``X`` or ``Y``
                            (SC-WEAT: a word of that target set), ``all`` (RNSB, MAC: the
                            whole test)
item                        the word (SC-WEAT); empty otherwise
statistic                   the metric's value (SC-WEAT: the word's effect size)
ci_low, ci_high             its bootstrap percentile interval at the run's confidence level
                            (empty with ``--bootstrap 0``)
se                          its bootstrap standard error: SD (ddof 1) of the defined resamples
                            (empty with ``--bootstrap 0``); ``--pool`` weights by se²
p_value                     ECT: Spearman's p of ρ = 0; SC-WEAT: the permutation p of the
                            run's ``alternative``; empty for the others
null_mean, null_sd,         with ``--null K``: the statistic on the K draws of WEAT's null
null_percentile, p_null,    (frequency-matched random X', Y'), summarised as d's
null_k                      (:mod:`weatkit.association.null`); empty for RIPA and DirectBias,
                            which do not read X and Y, and without ``--null``
n_x, n_y, n_a, n_b          the test's set sizes after OOV removal (and equalisation)
n_pairs                     definitional pairs used (RIPA, DirectBias); empty otherwise
n_bootstrap                 resamples drawn (RNSB: at most ``rnsb_bootstrap``)
n_undefined                 resamples whose statistic is undefined (left out of the interval)
==========================  ===========================================================

``association_items`` — what a metric gives per word: the test's keys, ``metric``, ``set``,
``item`` (the word) and ``value``: RND's δ(v) = dist(v, m_X) − dist(v, m_Y) and RIPA's β(w) of
the words of A and B, DirectBias's cos(w, g) of the words of A and B, RNSB's negative
probability p(t), MAC's mean cosine distance of the words of X and Y, and ECT's cos(m_X, a)
and cos(m_Y, a) of the words a of A and B (``set`` ``A:X``, ``A:Y``, ``B:X``, ``B:Y``: the
attribute set, then the target set of the mean).

``association_influence`` (``--metrics ... --influence``) — one row per word of each set an
``association`` row reads: the test's keys, ``metric``, ``row_set``, ``row_item`` (the row's
``metric``, ``set``, ``item``), ``set`` and ``item`` (the word left out; a definitional pair is
``x-y`` in set ``pairs``), ``statistic_without`` (the row's statistic without it) and ``delta``
(statistic_without − statistic); see :mod:`weatkit.association.influence`.

``association_pooled`` (``--metrics ... --pool LEVELS``) — ``pooled`` for each association
metric's statistic, per ``metric`` and ``set`` (after ``test``), with ``statistic``, ``se``,
``ci_low`` and ``ci_high`` in place of ``effect_size``, ``effect_size_se``,
``effect_size_ci_low`` and ``effect_size_ci_high``; SC-WEAT is not pooled (its rows are words);
see :func:`association_pooled_frame`.

``summary`` — one row per embeddings × language × list set × test. With several lists (CA-WEAT)
``statistic`` and ``effect_size`` are the medians over the lists and the CI is the
order-statistic interval of the median (CA-WEAT paper §5); with one list they are that list's
values and its bootstrap CI. Columns: ``embeddings, lang, list_set, test, n_lists, statistic,
statistic_ci_low, statistic_ci_high, effect_size, effect_size_ci_low, effect_size_ci_high,
p_value, p_holm, q_bh`` (single list only: the ``results`` row's values), ``ci_method``
(``median-order-statistic`` or ``bootstrap-percentile``/``bootstrap-bca``) and ``ci_level``
(the interval's actual coverage). ``n_lists`` counts the lists whose ``statistic`` and
``effect_size`` are both defined; the medians are taken over those lists only, so both
intervals share one ``n`` and one coverage.

``pooled`` (``weatkit run --pool LEVELS``, ``pool:`` in a grid) — DerSimonian–Laird
random-effects pooling of d (:mod:`weatkit.stats.meta`), each d weighted by its bootstrap
variance ``effect_size_se²``; one row per group of at least two units:

==========================  ===========================================================
level                       ``lists`` (the lists of one embeddings × language × list set ×
                            test, beside the CA-WEAT median), ``languages`` (the languages
                            of one embeddings × list set × test; each language enters with
                            its lists pooled, or its one list) or ``layers`` (the layers of
                            one ``hf:`` model × language × list set × test, each layer's lists
                            pooled first)
embeddings, lang,           the group (``lang`` empty for ``languages``; ``embeddings`` is
list_set, test              the model for ``layers``)
k, units                    how many units were pooled, and which (list ids, languages or
                            layer names), separated by spaces
effect_size                 pooled d* = Σ w*_i d_i / Σ w*_i, w*_i = 1 / (v_i + τ²)
effect_size_se              1 / √(Σ w*_i)
effect_size_ci_low/high     d* ± z SE (normal interval at ``ci_level``)
hk_ci_low/high              Hartung–Knapp interval (t with k − 1 degrees of freedom)
tau2, i2                    between-unit variance τ² and I² (share of heterogeneity)
q, q_pvalue                 Cochran's Q and its χ²_{k−1} p-value
ci_level                    the intervals' level (the run's confidence level)
==========================  ===========================================================

Units without a d or a positive bootstrap variance are left out (``k`` counts the others).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from weatkit._io.atomic import write_outputs  # noqa: F401  (re-exported)
from weatkit.errors import WeatkitError
from weatkit.stats.aggregate import median_ci
from weatkit.stats.meta import PooledEffect, random_effects
from weatkit.stats.multiplicity import ADJUSTED_COLUMNS, adjust_pvalues

if TYPE_CHECKING:  # the engine (torch) is not needed to read or write tables
    from weatkit.engine.weat import EngineOptions

KEY_COLUMNS = ["embeddings", "lang", "list_set", "list_id", "test"]
VALUE_COLUMNS = [
    "statistic",
    "statistic_ci_low",
    "statistic_ci_high",
    "effect_size",
    "effect_size_ci_low",
    "effect_size_ci_high",
    "p_value",
    *ADJUSTED_COLUMNS,
]
RESULT_COLUMNS = [
    *KEY_COLUMNS,
    "n_x",
    "n_y",
    "n_a",
    "n_b",
    "n_oov",
    "coverage",
    *VALUE_COLUMNS[: VALUE_COLUMNS.index("p_value")],
    "effect_size_se",
    *VALUE_COLUMNS[VALUE_COLUMNS.index("p_value") :],
    "sign_stability",
    "null_mean",
    "null_sd",
    "null_percentile",
    "p_null",
    "null_k",
    "permutation_method",
    "n_permutations",
    "oov_items",
]
SUMMARY_COLUMNS = [
    "embeddings",
    "lang",
    "list_set",
    "test",
    "n_lists",
    *VALUE_COLUMNS,
    "ci_method",
    "ci_level",
]
#: The levels ``pooled`` can pool over (module docstring).
POOL_LEVELS = ("lists", "languages", "layers")
POOLED_COLUMNS = [
    "level",
    "embeddings",
    "lang",
    "list_set",
    "test",
    "k",
    "units",
    "effect_size",
    "effect_size_se",
    "effect_size_ci_low",
    "effect_size_ci_high",
    "hk_ci_low",
    "hk_ci_high",
    "tau2",
    "i2",
    "q",
    "q_pvalue",
    "ci_level",
]
INFLUENCE_COLUMNS = [*KEY_COLUMNS, "set", "item", "d_without", "delta"]
ASSOCIATION_COLUMNS = [
    *KEY_COLUMNS,
    "metric",
    "set",
    "item",
    "statistic",
    "ci_low",
    "ci_high",
    "se",
    "p_value",
    "null_mean",
    "null_sd",
    "null_percentile",
    "p_null",
    "null_k",
    "n_x",
    "n_y",
    "n_a",
    "n_b",
    "n_pairs",
    "n_bootstrap",
    "n_undefined",
]
ASSOCIATION_ITEM_COLUMNS = [*KEY_COLUMNS, "metric", "set", "item", "value"]
ASSOCIATION_INFLUENCE_COLUMNS = [
    *KEY_COLUMNS,
    "metric",
    "row_set",
    "row_item",
    "set",
    "item",
    "statistic_without",
    "delta",
]
#: ``pooled``'s columns that ``association_pooled`` names as ``association`` does.
_ASSOCIATION_POOLED_NAMES = {
    "effect_size": "statistic",
    "effect_size_se": "se",
    "effect_size_ci_low": "ci_low",
    "effect_size_ci_high": "ci_high",
}
ASSOCIATION_POOLED_COLUMNS = [
    *POOLED_COLUMNS[: POOLED_COLUMNS.index("test") + 1],
    "metric",
    "set",
    *(_ASSOCIATION_POOLED_NAMES.get(c, c) for c in POOLED_COLUMNS[POOLED_COLUMNS.index("k") :]),
]
#: The association metrics ``association_pooled`` leaves out: SC-WEAT's rows are words, which
#: differ from one list (or language) to another.
UNPOOLED_METRICS = ("sc_weat",)
NULL_COLUMNS = [*KEY_COLUMNS, "draw", "d"]
FORMATS = ("csv", "json", "parquet", "markdown")

#: Column types: ``TEXT`` identifiers and labels (read back as strings, ``1`` and ``NA``
#: included), ``NUMBER`` real numbers (an empty field: not computed, e.g. no bootstrap) and
#: ``COUNT`` whole numbers ≥ 0 (empty: not computed).
TEXT, NUMBER, COUNT = "text", "number", "count"
#: The type of every column the tables of a run directory hold (``results``, ``summary``,
#: isomorphism, grid and asymmetry tables): a column name means the same in every table.
#: :func:`weatkit.report.run_dir.read_table` checks every field against it.
COLUMN_TYPES: dict[str, str] = {
    **dict.fromkeys(
        [
            *KEY_COLUMNS,
            "baseline",
            "measure",
            "src",
            "tgt",
            "detail",
            "ci_method",
            "permutation_method",
            "oov_items",
            "counts_source",
            "list_sets",
            "level",
            "units",
            "set",
            "item",
            "row_set",
            "row_item",
            "metric",
            "forms",
            "flag",  # why a correlation cannot be read as significant (too few units)
        ],
        TEXT,
    ),
    **dict.fromkeys(
        [
            *VALUE_COLUMNS,
            "effect_size_se",
            "coverage",
            "ci_level",
            "value",
            "baseline_effect_size",
            "difference",
            "difference_ci_low",
            "difference_ci_high",
            "count_a",  # frequencies per million words with wordfreq
            "count_b",
            "count_difference",
            "pearson_r",
            "pearson_p",
            "spearman_rho",
            "spearman_p",
            "kendall_p",
            "r2",
            "slope",
            "intercept",
            "hk_ci_low",
            "hk_ci_high",
            "tau2",
            "i2",
            "q",
            "q_pvalue",
            "sign_stability",
            "d_without",
            "statistic_without",
            "se",
            "delta",
            "null_mean",
            "null_sd",
            "null_percentile",
            "p_null",
            "d",
            "ci_low",
            "ci_high",
            "split_half",  # reliability (weatkit.validity.parallel_forms)
            "split_half_ci_low",
            "split_half_ci_high",
            "r_half",
            "icc2",
            "icc2_ci_low",
            "icc2_ci_high",
            "icc2_p",
            "icc2k",
            "icc2k_ci_low",
            "icc2k_ci_high",
        ],
        NUMBER,
    ),
    **dict.fromkeys(
        [
            "n_x",
            "n_y",
            "n_a",
            "n_b",
            "n_oov",
            "n_permutations",
            "n_lists",
            "n_words",
            "n_src",
            "n_tgt",
            "n_languages",
            "n",
            "k",
            "n_min",
            "null_k",
            "draw",
            "n_pairs",
            "n_bootstrap",
            "n_undefined",
            "n_units",
            "n_forms",
            "n_lists_dropped",
            "n_splits",
            "n_degenerate",
        ],
        COUNT,
    ),
}
#: Column name prefixes with one type (``summary``'s ``iso_ev``, ``iso_gh``, ... with
#: ``weatkit run --isomorphism``).
COLUMN_PREFIX_TYPES: dict[str, str] = {"iso_": NUMBER}


def column_type(name: str) -> str | None:
    """The declared type of column ``name`` (:data:`COLUMN_TYPES`); None when undeclared."""
    if name in COLUMN_TYPES:
        return COLUMN_TYPES[name]
    return next((t for p, t in COLUMN_PREFIX_TYPES.items() if name.startswith(p)), None)


#: The columns a CA-WEAT summary takes the median of.
_AGGREGATED = ("statistic", "effect_size")


def results_frame(rows: list[Mapping[str, object]]) -> pd.DataFrame:
    """The ``results`` table from per-test rows, in :data:`RESULT_COLUMNS` order.

    ``p_holm`` and ``q_bh`` are (re)computed over all the rows given: the family is the table
    (a run's tests, or a grid's when its jobs' rows are collated).
    """
    frame = pd.DataFrame(list(rows), columns=RESULT_COLUMNS)
    # empty without --null
    frame["null_k"] = pd.to_numeric(frame["null_k"], errors="coerce").astype("Int64")
    p = pd.to_numeric(frame["p_value"], errors="coerce").to_numpy(np.float64)
    for column, method in ADJUSTED_COLUMNS.items():
        frame[column] = adjust_pvalues(p, method)
    return frame


def association_frames(
    rows: list[Mapping[str, object]], items: list[Mapping[str, object]]
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``association`` and ``association_items`` tables from their rows, in
    :data:`ASSOCIATION_COLUMNS` and :data:`ASSOCIATION_ITEM_COLUMNS` order."""
    table = pd.DataFrame(list(rows), columns=ASSOCIATION_COLUMNS)
    for column in ("n_pairs", "null_k"):  # empty for some metrics, or without --null
        table[column] = pd.to_numeric(table[column], errors="coerce").astype("Int64")
    return table, pd.DataFrame(list(items), columns=ASSOCIATION_ITEM_COLUMNS)


def summary_frame(results: pd.DataFrame, options: EngineOptions) -> pd.DataFrame:
    """Aggregate ``results`` per embeddings × language × list set × test.

    The groups are those of ``results.groupby(keys, sort=False)`` (first appearance; a row
    with a missing key is in none), read from the columns' arrays once rather than as one
    frame per group.
    """
    rows = []
    group_keys = ["embeddings", "lang", "list_set", "test"]
    codes = results.groupby(group_keys, sort=False).ngroup().to_numpy(np.float64)
    order = np.argsort(codes, kind="stable")
    order = order[~np.isnan(codes[order])]
    groups = np.split(order, np.flatnonzero(np.diff(codes[order])) + 1) if len(order) else []
    # a list enters the summary when both its S and d are defined (d is NaN when the pooled
    # std of s(w) is 0): both medians then share one n and one coverage
    values = results[list(_AGGREGATED)].apply(pd.to_numeric, errors="coerce")
    defined_all = values.notna().all(axis=1).to_numpy()
    aggregated = {col: values[col].to_numpy() for col in _AGGREGATED}
    columns = {col: results[col].to_numpy() for col in [*group_keys, *VALUE_COLUMNS]}
    for group in groups:
        first = group[0]
        row: dict[str, object] = {key: columns[key][first] for key in group_keys}
        defined = defined_all[group]
        row["n_lists"] = int(defined.sum())
        if len(group) == 1:
            for col in VALUE_COLUMNS:
                row[col] = columns[col][first]
            row["ci_method"] = f"bootstrap-{options.ci_method}" if options.n_bootstrap else ""
            row["ci_level"] = options.confidence_level if options.n_bootstrap else np.nan
        else:
            row["ci_level"] = np.nan
            for col in _AGGREGATED:
                if not defined.any():
                    row[col] = row[f"{col}_ci_low"] = row[f"{col}_ci_high"] = np.nan
                    continue
                kept = aggregated[col][group[defined]].astype(float)
                m = median_ci(kept, options.confidence_level)
                row[col], row[f"{col}_ci_low"], row[f"{col}_ci_high"] = m.median, m.low, m.high
                row["ci_level"] = m.confidence_level  # the same n for both columns
            row["p_value"] = np.nan
            row["ci_method"] = "median-order-statistic"
        rows.append(row)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


def pooled_frame(
    results: pd.DataFrame,
    levels: Sequence[str],
    confidence_level: float = 0.95,
    layers: Mapping[str, tuple[str, int]] | None = None,
    *,
    by: Sequence[str] = (),
    value: str = "effect_size",
    se: str = "effect_size_se",
) -> pd.DataFrame:
    """The ``pooled`` table (module docstring) of ``results`` at each of ``levels``.

    Args:
        results: a ``results`` table with ``effect_size`` and ``effect_size_se``.
        levels: some of :data:`POOL_LEVELS`, in the order their rows are wanted.
        confidence_level: of the intervals.
        layers: embeddings name → (model, layer) of the layers of ``hf:`` models (``layers``
            pools the names sharing a model; other embeddings are not pooled over).
        by: more columns that tell the statistics of a test apart, kept in every group
            (``association``'s ``metric``, ``set``: :func:`association_pooled_frame`); their
            columns follow ``test``.
        value, se: the columns of the statistic and of its bootstrap standard error.

    Raises:
        WeatkitError: an unknown level.
    """
    unknown = [level for level in levels if level not in POOL_LEVELS]
    if unknown:
        raise WeatkitError(
            f"unknown pooling level {unknown[0]!r}: choose from {', '.join(POOL_LEVELS)}"
        )
    rows: list[dict[str, object]] = []
    # stage 1: one estimate (d, SE) per embeddings × language × list set × test
    estimates: list[dict[str, object]] = []
    keys = ["embeddings", "lang", "list_set", "test", *by]
    for group_keys, group in results.groupby(keys, sort=False):
        key = dict(zip(keys, group_keys, strict=True))
        d, se_, ids = _units(group, "list_id", value, se)
        if len(d) >= 2:
            pooled = random_effects(d, se_**2, confidence_level)
            estimates.append({**key, "d": pooled.estimate, "se": pooled.se})
            if "lists" in levels:
                rows.append(_pooled_row("lists", key, ids, pooled))
        elif len(d) == 1:
            estimates.append({**key, "d": d[0], "se": se_[0]})
    stage1 = pd.DataFrame(estimates, columns=[*keys, "d", "se"])
    for level in levels:
        if level == "languages":
            group_by, unit = ["embeddings", "list_set", "test", *by], "lang"
            frame = stage1
        elif level == "layers":
            models = layers or {}
            frame = stage1[stage1["embeddings"].isin(list(models))].copy()
            frame["layer_name"] = frame["embeddings"]
            frame["layer"] = [models[name][1] for name in frame["embeddings"]]
            frame["embeddings"] = [models[name][0] for name in frame["embeddings"]]
            frame = frame.sort_values("layer", kind="stable")
            group_by, unit = ["embeddings", "lang", "list_set", "test", *by], "layer_name"
        else:
            continue
        for group_keys, group in frame.groupby(group_by, sort=False):
            if len(group) < 2:
                continue
            key = dict(zip(group_by, group_keys, strict=True))
            d, se_ = group["d"].to_numpy(float), group["se"].to_numpy(float)
            pooled = random_effects(d, se_**2, confidence_level)
            rows.append(_pooled_row(level, key, group[unit].astype(str).tolist(), pooled))
    at = POOLED_COLUMNS.index("k")
    return pd.DataFrame(rows, columns=[*POOLED_COLUMNS[:at], *by, *POOLED_COLUMNS[at:]])


def association_pooled_frame(
    association: pd.DataFrame,
    levels: Sequence[str],
    confidence_level: float = 0.95,
    layers: Mapping[str, tuple[str, int]] | None = None,
) -> pd.DataFrame:
    """The ``association_pooled`` table: :func:`pooled_frame` of every association metric's
    statistic (``association``'s ``statistic`` weighted by its bootstrap ``se``²), per
    ``metric`` and ``set``, at the same levels as d; SC-WEAT (:data:`UNPOOLED_METRICS`) is
    left out. Columns :data:`ASSOCIATION_POOLED_COLUMNS`."""
    rows = association[~association["metric"].isin(UNPOOLED_METRICS)]
    frame = pooled_frame(
        rows, levels, confidence_level, layers, by=("metric", "set"), value="statistic", se="se"
    )
    return frame.rename(columns=_ASSOCIATION_POOLED_NAMES)[ASSOCIATION_POOLED_COLUMNS]


def _units(
    group: pd.DataFrame, unit: str, value: str, se_column: str
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The d, SE and name of the rows of ``group`` that can be pooled (finite d, SE > 0)."""
    d = pd.to_numeric(group[value], errors="coerce").to_numpy(np.float64)
    se = pd.to_numeric(group[se_column], errors="coerce").to_numpy(np.float64)
    ok = np.isfinite(d) & np.isfinite(se) & (se > 0)
    return d[ok], se[ok], group[unit].astype(str)[ok].tolist()


def _pooled_row(
    level: str, key: Mapping[str, object], units: Sequence[str], pooled: PooledEffect
) -> dict[str, object]:
    return {
        "level": level,
        **key,
        "k": pooled.k,
        "units": " ".join(units),
        "effect_size": pooled.estimate,
        "effect_size_se": pooled.se,
        "effect_size_ci_low": pooled.ci_low,
        "effect_size_ci_high": pooled.ci_high,
        "hk_ci_low": pooled.hk_ci_low,
        "hk_ci_high": pooled.hk_ci_high,
        "tau2": pooled.tau2,
        "i2": pooled.i2,
        "q": pooled.q,
        "q_pvalue": pooled.q_pvalue,
        "ci_level": pooled.confidence_level,
    }


def render(df: pd.DataFrame, fmt: str) -> bytes:
    """``df`` as bytes in one of :data:`FORMATS`."""
    if fmt == "csv":
        return df.to_csv(index=False).encode()
    if fmt == "json":
        return (
            df.to_json(orient="records", force_ascii=False, indent=1, double_precision=15) + "\n"
        ).encode()
    if fmt == "parquet":
        buf = io.BytesIO()
        df.to_parquet(buf, index=False)
        return buf.getvalue()
    if fmt == "markdown":
        return (df.to_markdown(index=False, floatfmt=".4g") + "\n").encode()
    raise WeatkitError(f"unknown format {fmt!r}: choose one of {', '.join(FORMATS)}")


def manifest_bytes(manifest: Mapping[str, object]) -> bytes:
    """The manifest as pretty JSON (dataclasses already turned into dicts)."""
    return (json.dumps(manifest, indent=2, ensure_ascii=False, default=str) + "\n").encode()
