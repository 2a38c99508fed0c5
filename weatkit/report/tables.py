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
p_value                     permutation p-value of S (empty with ``--permutations 0``)
permutation_method          ``exact`` or ``monte-carlo``
n_permutations              re-splits used for the p-value
oov_items                   the removed items, ``SET:item`` separated by spaces
==========================  ===========================================================

``summary`` — one row per embeddings × language × list set × test. With several lists (CA-WEAT)
``statistic`` and ``effect_size`` are the medians over the lists and the CI is the
order-statistic interval of the median (CA-WEAT paper §5); with one list they are that list's
values and its bootstrap CI. Columns: ``embeddings, lang, list_set, test, n_lists, statistic,
statistic_ci_low, statistic_ci_high, effect_size, effect_size_ci_low, effect_size_ci_high,
p_value`` (single list only), ``ci_method`` (``median-order-statistic`` or
``bootstrap-percentile``/``bootstrap-bca``) and ``ci_level`` (the interval's actual coverage).
``n_lists`` counts the lists whose ``statistic`` and ``effect_size`` are both defined; the
medians are taken over those lists only, so both intervals share one ``n`` and one coverage.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from weatkit._io.atomic import write_outputs  # noqa: F401  (re-exported)
from weatkit.errors import WeatkitError
from weatkit.stats.aggregate import median_ci

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
]
RESULT_COLUMNS = [
    *KEY_COLUMNS,
    "n_x",
    "n_y",
    "n_a",
    "n_b",
    "n_oov",
    "coverage",
    *VALUE_COLUMNS,
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
            "flag",  # why a correlation cannot be read as significant (too few units)
        ],
        TEXT,
    ),
    **dict.fromkeys(
        [
            *VALUE_COLUMNS,
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
            "n_min",
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
    """The ``results`` table from per-test rows, in :data:`RESULT_COLUMNS` order."""
    return pd.DataFrame(list(rows), columns=RESULT_COLUMNS)


def summary_frame(results: pd.DataFrame, options: EngineOptions) -> pd.DataFrame:
    """Aggregate ``results`` per embeddings × language × list set × test."""
    rows = []
    group_keys = ["embeddings", "lang", "list_set", "test"]
    for keys, group in results.groupby(group_keys, sort=False):
        row: dict[str, object] = dict(zip(group_keys, keys, strict=True))
        # a list enters the summary when both its S and d are defined (d is NaN when the
        # pooled std of s(w) is 0): both medians then share one n and one coverage
        values = group[list(_AGGREGATED)].apply(pd.to_numeric, errors="coerce")
        defined = values.notna().all(axis=1)
        row["n_lists"] = int(defined.sum())
        if len(group) == 1:
            single = group.iloc[0]
            for col in VALUE_COLUMNS:
                row[col] = single[col]
            row["ci_method"] = f"bootstrap-{options.ci_method}" if options.n_bootstrap else ""
            row["ci_level"] = options.confidence_level if options.n_bootstrap else np.nan
        else:
            row["ci_level"] = np.nan
            for col in _AGGREGATED:
                if not defined.any():
                    row[col] = row[f"{col}_ci_low"] = row[f"{col}_ci_high"] = np.nan
                    continue
                m = median_ci(values.loc[defined, col].to_numpy(float), options.confidence_level)
                row[col], row[f"{col}_ci_low"], row[f"{col}_ci_high"] = m.median, m.low, m.high
                row["ci_level"] = m.confidence_level  # the same n for both columns
            row["p_value"] = np.nan
            row["ci_method"] = "median-order-statistic"
        rows.append(row)
    return pd.DataFrame(rows, columns=SUMMARY_COLUMNS)


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
