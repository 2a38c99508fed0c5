"""WEAT effect sizes (Caliskan et al. 2017) of a run summary as the registered measure ``weat``,
and a run's association metrics (``association.csv``) as their registered measures."""

from __future__ import annotations

import math

import pandas as pd

from weatkit.measures.result import MeasureResult


def _source_and_layer(embeddings: str, layer: int | None) -> tuple[str, str]:
    """The embeddings name without ``@LAYER`` and the layer (``""``: none): from the name when
    it ends in one (a model's layers), else ``layer`` (a model read at one layer)."""
    if "@" in embeddings:
        name, at = embeddings.rsplit("@", 1)
        return name, at
    return embeddings, "" if layer is None else str(layer)


def weat_measures(
    summary: pd.DataFrame, *, source: str | None = None, layer: int | None = None
) -> list[MeasureResult]:
    """One ``weat`` result per row of a run's summary table
    (:data:`weatkit.report.tables.SUMMARY_COLUMNS`).

    The value is the effect size d (for CA-WEAT the median over the lists, with its
    order-statistic interval and actual coverage ``ci_level``); ``n`` is ``n_lists``.
    ``test`` is ``LIST_SET:TEST``, with ``@LAYER`` when the embeddings name ends in one (a
    model's layers) or when ``layer`` is given (a model read at that one layer, whose
    embeddings name has no ``@``); ``source`` defaults to the embeddings name without the layer.
    """
    out = []
    for r in summary.itertuples(index=False):
        name, at = _source_and_layer(str(r.embeddings), layer)
        test = f"{r.list_set}:{r.test}" + (f"@{at}" if at else "")
        level = pd.to_numeric(r.ci_level, errors="coerce")
        out.append(
            MeasureResult(
                "weat",
                source or name,
                str(r.lang),
                float(r.effect_size),
                float(r.effect_size_ci_low),
                float(r.effect_size_ci_high),
                float(level) if not pd.isna(level) else math.nan,
                int(r.n_lists),
                r.ci_method if isinstance(r.ci_method, str) else "",
                test,
            )
        )
    return out


def association_measures(
    association: pd.DataFrame,
    confidence_level: float,
    *,
    source: str | None = None,
    layer: int | None = None,
) -> list[MeasureResult]:
    """One result per metric, test and row ``set`` (and word, for SC-WEAT) of a run's
    ``association`` table (:data:`weatkit.report.tables.ASSOCIATION_COLUMNS`), as its registered
    measure (``rnd``, ``sc-weat``, ...: :func:`weatkit.association.options.measure_name`).

    With one list the value is its statistic with its bootstrap interval at
    ``confidence_level``; with several (CA-WEAT) the median over the lists with its
    order-statistic interval and actual coverage, as the WEAT summary does
    (:func:`weatkit.stats.aggregate.median_ci`); ``n`` counts the lists. ``test`` is
    ``METRIC:LIST_SET:TEST:SET`` (``:WORD`` for SC-WEAT; no ``:all``) with ``@LAYER`` as in
    :func:`weat_measures`: the measure's column in ``weatkit compare``'s table.
    """
    from weatkit.association.options import measure_name
    from weatkit.stats.aggregate import median_ci

    out = []
    keys = ["embeddings", "lang", "list_set", "test", "metric", "set", "item"]
    frame = association.assign(item=association["item"].fillna("").astype(str))
    for (embeddings, lang, list_set, test, metric, part, item), group in frame.groupby(
        keys, sort=False
    ):
        name, at = _source_and_layer(str(embeddings), layer)
        column = ":".join(
            str(x) for x in (metric, list_set, test, part, item) if x not in ("", "all")
        )
        values = pd.to_numeric(group["statistic"], errors="coerce").dropna()
        if len(group) == 1 or values.empty:
            row = group.iloc[0]
            low, high = float(row["ci_low"]), float(row["ci_high"])
            value, level, how = float(row["statistic"]), confidence_level, "bootstrap-percentile"
            level = level if not math.isnan(low) else math.nan
        else:
            m = median_ci(values.to_numpy(float), confidence_level)
            value, low, high, level = m.median, m.low, m.high, m.confidence_level
            how = "median-order-statistic"
        out.append(
            MeasureResult(
                measure_name(str(metric)),
                source or name,
                str(lang),
                value,
                low,
                high,
                level,
                len(group),
                how if not math.isnan(low) else "",
                column + (f"@{at}" if at else ""),
            )
        )
    return out
