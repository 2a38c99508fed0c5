"""Reliability across the parallel lists of a run: the ``reliability`` table (issue 28 §4.1).

A run's ``results`` table has one effect size d per embeddings × language × list set × list ×
test. CA-WEAT's parallel lists of a language (up to 24, written by different native speakers)
are parallel forms of one test; one embeddings space gives one d per list, so a reliability
needs units scored by every form. The design: for each language × list set × test,

* **units** = the embeddings spaces (models) of the run,
* **forms** = the parallel lists (``list_id``),
* scores X[i, j] = d of embeddings i on list j (an n × k table).

Only the lists that have a finite d for every embeddings of the group are kept (a list skipped
for low coverage on one space is left out for all; ``n_lists_dropped`` counts them). A group is
reported when it keeps **n ≥ 3 embeddings and k ≥ 2 lists** (a correlation across 2 units is
±1). Each row has

* split-half reliability r_SB = 2r / (1 + r), averaged over splits of the lists, with its
  percentile bootstrap interval over the embeddings (:func:`weatkit.validity.split_half`);
* ICC(2,1) (two-way random, absolute agreement: one list) and ICC(2,k) (the mean of the k
  lists, the score a CA-WEAT summary reports) with their F-based intervals and the p of
  ICC = 0 (:func:`weatkit.validity.icc`): lists are a sample of the lists that could have been
  written, hence model 2.

Both ask whether the lists *rank the models alike*: a high value means the lists agree on which
embeddings are more biased on this test, not that any d is large.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from weatkit.errors import DataError
from weatkit.validity.icc import icc
from weatkit.validity.reliability import N_SPLITS, split_half

#: The group of a ``reliability`` row, and the units and forms of its table.
GROUP_COLUMNS = ["lang", "list_set", "test"]
UNIT_COLUMN, FORM_COLUMN, SCORE_COLUMN = "embeddings", "list_id", "effect_size"
#: Fewest embeddings (units) and lists (forms) of a reported group.
MIN_UNITS, MIN_FORMS = 3, 2

#: The statistics of one units × forms table (:func:`forms_reliability`).
STATISTIC_COLUMNS = [
    "split_half",
    "split_half_ci_low",
    "split_half_ci_high",
    "r_half",
    "n_splits",
    "n_degenerate",
    "icc2",
    "icc2_ci_low",
    "icc2_ci_high",
    "icc2_p",
    "icc2k",
    "icc2k_ci_low",
    "icc2k_ci_high",
    "ci_level",
]
#: The columns of :func:`parallel_forms`.
RELIABILITY_COLUMNS = [
    *GROUP_COLUMNS,
    "n_units",
    "n_forms",
    "n_lists_dropped",
    "units",
    "forms",
    *STATISTIC_COLUMNS,
]


def parallel_forms(
    results: pd.DataFrame,
    *,
    n_splits: int = N_SPLITS,
    n_bootstrap: int = 2000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """The ``reliability`` table of a run's ``results``: split-half r_SB and ICC(2,1)/ICC(2,k)
    across the parallel lists of each language × list set × test, the embeddings as units
    (module docstring).

    Args:
        results: a run's results (``embeddings``, ``lang``, ``list_set``, ``list_id``,
            ``test``, ``effect_size``), e.g. ``RunResult.results``.
        n_splits, n_bootstrap, seed, confidence_level: as in :func:`split_half`
            (``confidence_level`` also for the ICC intervals).

    Returns:
        One row per group with at least 3 embeddings and 2 lists (columns
        :data:`RELIABILITY_COLUMNS`; ``units`` and ``forms`` list them, ``;``-separated);
        empty when none has (:func:`parallel_forms_shortfall` says why). A group whose
        split-half is undefined (every split has a constant half score) has NaN there.

    Example:
        >>> rows = [{"embeddings": e, "lang": "ca", "list_set": "ca-weat", "list_id": l,
        ...          "test": "weat1", "effect_size": d + 0.1 * l * (e == "b")}
        ...         for e, d in {"a": 0.2, "b": 0.9, "c": 1.5}.items() for l in (1, 2, 3)]
        >>> row = parallel_forms(pd.DataFrame(rows), n_bootstrap=0).iloc[0]
        >>> int(row["n_forms"]), float(row["split_half"].round(3)), float(row["icc2k"].round(3))
        (3, 0.997, 0.997)
    """
    rows = []
    for key, group in results.groupby(GROUP_COLUMNS, sort=True):
        table = _score_table(group)
        if table is None:
            continue
        scores, n_dropped = table
        row: dict[str, object] = dict(zip(GROUP_COLUMNS, key, strict=True))
        row.update(
            n_units=scores.shape[0],
            n_forms=scores.shape[1],
            n_lists_dropped=n_dropped,
            units=";".join(scores.index),
            forms=";".join(scores.columns),
        )
        row.update(
            forms_reliability(
                scores,
                n_splits=n_splits,
                n_bootstrap=n_bootstrap,
                seed=seed,
                confidence_level=confidence_level,
            )
        )
        rows.append(row)
    return pd.DataFrame(rows, columns=RELIABILITY_COLUMNS)


def forms_reliability(
    scores: pd.DataFrame,
    *,
    n_splits: int = N_SPLITS,
    n_bootstrap: int = 2000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> dict[str, object]:
    """The :data:`STATISTIC_COLUMNS` of one n × k table (units in rows, forms in columns, no
    missing value): split-half r_SB with its bootstrap CI (:func:`split_half`; NaN when every
    split has a constant half score) and ICC(2,1), ICC(2,k) with their F-based CIs and the p
    of ICC(2,1) = 0 (:func:`weatkit.validity.icc`). A row of :func:`parallel_forms`, and of
    GEST's reliability across templates (:func:`weatkit.gest.reliability.gest_reliability`)."""
    row: dict[str, object] = dict(
        _split_half_columns(scores, n_splits, n_bootstrap, seed, confidence_level)
    )
    by_kind = icc(scores, confidence_level=confidence_level)
    for kind, prefix in (("ICC2", "icc2"), ("ICC2k", "icc2k")):
        result = by_kind[kind]
        row[prefix] = result.statistic
        row[f"{prefix}_ci_low"], row[f"{prefix}_ci_high"] = result.confidence_interval
    row["icc2_p"] = by_kind["ICC2"].pvalue
    row["ci_level"] = confidence_level
    return row


def parallel_forms_shortfall(results: pd.DataFrame) -> str | None:
    """Why ``results`` give no ``reliability`` row (one line), or None when some group has
    3 embeddings and 2 lists scored by all of them."""
    if any(_score_table(group) is not None for _, group in results.groupby(GROUP_COLUMNS)):
        return None
    n_units = results[UNIT_COLUMN].nunique() if len(results) else 0
    n_forms = (
        int(results.groupby(GROUP_COLUMNS)[FORM_COLUMN].nunique().max()) if len(results) else 0
    )
    return (
        f"no reliability across parallel lists: it needs {MIN_UNITS} embeddings scored on "
        f"{MIN_FORMS} lists of one test in one language; this run has {n_units} embeddings "
        f"and at most {n_forms} list(s) of a test"
    )


def _score_table(group: pd.DataFrame) -> tuple[pd.DataFrame, int] | None:
    """The embeddings × lists table of d of one group, restricted to the lists with a finite
    d for every embeddings, and how many lists that dropped; None below 3 × 2."""
    wide = group.pivot_table(
        index=UNIT_COLUMN, columns=FORM_COLUMN, values=SCORE_COLUMN, aggfunc="first", dropna=False
    )
    wide = wide.reindex(index=sorted(group[UNIT_COLUMN].astype(str).unique()))
    wide.index = wide.index.astype(str)
    wide.columns = [str(c) for c in wide.columns]
    complete = [c for c in wide.columns if np.isfinite(wide[c].to_numpy(dtype=np.float64)).all()]
    scores = wide[complete]
    if scores.shape[0] < MIN_UNITS or scores.shape[1] < MIN_FORMS:
        return None
    return scores, wide.shape[1] - len(complete)


def _split_half_columns(
    scores: pd.DataFrame, n_splits: int, n_bootstrap: int, seed: int, level: float
) -> dict[str, object]:
    """The split-half columns of one row; NaN when every split is degenerate."""
    try:
        result = split_half(
            scores, n_splits=n_splits, n_bootstrap=n_bootstrap, seed=seed, confidence_level=level
        )
    except DataError:
        nan = float("nan")
        return {
            "split_half": nan,
            "split_half_ci_low": nan,
            "split_half_ci_high": nan,
            "r_half": nan,
            "n_splits": 0,
            "n_degenerate": 0,
        }
    return {
        "split_half": result.statistic,
        "split_half_ci_low": result.confidence_interval[0],
        "split_half_ci_high": result.confidence_interval[1],
        "r_half": result.r_half,
        "n_splits": result.n_splits,
        "n_degenerate": result.n_degenerate,
    }
