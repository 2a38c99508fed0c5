"""WEAT effect sizes (Caliskan et al. 2017) of a run summary as the registered measure ``weat``."""

from __future__ import annotations

import math

import pandas as pd

from weatkit.measures.result import MeasureResult


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
        embeddings = str(r.embeddings)
        if "@" in embeddings:
            name, at = embeddings.rsplit("@", 1)
        else:
            name, at = embeddings, "" if layer is None else str(layer)
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
