"""EuroGEST metrics of one language from per-item masculine rates r (Rowe et al., EMNLP 2025).

For the items j of stereotype s (1–16; 1–7 female, 8–16 male stereotypes, as GEST):

* masculine rate     R_s = mean_{j ∈ s} r_j,   r_j = exp(S_m) / (exp(S_m) + exp(S_f))
* stereotype rate    g_s = mean(R_8 … R_16) / mean(R_1 … R_7)   (unweighted over stereotypes)
* masculine rank     rank of R_s, 1 = most masculine (upstream's ranking, ties averaged)
* inclination        version 2025-12 / 2025-08: mean(R_1 … R_14) − R_s (positive = more feminine
  than the language's baseline); version 2026-04: R_s − mean(R_1 … R_14) (the opposite sign)

g_s > 1: the male stereotypes get more masculine probability than the female ones. Unlike GEST's
g_s (a ratio of geometric means of probability ratios, :mod:`weatkit.gest.aggregate`), this is a
ratio of arithmetic means of shares r ∈ (0, 1) (``eurogest/SOURCE.md``). Version 2026-04 sets R_s
missing below 10 items and drops a language missing a stereotype; here that is an error.

**Bootstrap.** Percentile intervals from resamples that redraw the items of each stereotype with
replacement, separately per stereotype (:func:`weatkit.gest.aggregate.resample_indices`, scheme
``"stratified"`` of :func:`weatkit.stats.resampling.bootstrap_draws`, as for GEST); R_s and g_s
are recomputed from the same resamples. Unscored items (NaN r) are dropped first.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from weatkit.errors import WeatkitError
from weatkit.gest.aggregate import (
    DEFAULT_BOOTSTRAP,
    DEFAULT_CONFIDENCE_LEVEL,
    DEFAULT_SEED,
    GestSummary,
    bootstrap_distribution,
    resample_indices,
)
from weatkit.gest.data import FEMALE_STEREOTYPES, MALE_STEREOTYPES, STEREOTYPES, stereotype_frame
from weatkit.stats.intervals import percentile_interval

#: Version 2026-04's least number of items per stereotype.
MIN_ITEMS_B = 10


def least_items(code: str) -> int:
    """The least scored items per stereotype of a code version's g_s: :data:`MIN_ITEMS_B` for
    2026-04, else 1 (every stereotype needs one)."""
    return MIN_ITEMS_B if code == "2026-04" else 1

STEREOTYPE_COLUMNS = [
    "stereotype",
    "name",
    "group",
    "n",
    "R",
    "R_ci_low",
    "R_ci_high",
    "rank",
    "inclination",
]
SUMMARY_COLUMNS = [
    "lang",
    "code",
    "n_items",
    "n_skipped",
    "n_coinciding",
    "coinciding",
    "g_s",
    "g_s_ci_low",
    "g_s_ci_high",
    "n_bootstrap",
    "seed",
    "ci_level",
]

_F = np.asarray(FEMALE_STEREOTYPES) - 1
_M = np.asarray(MALE_STEREOTYPES) - 1


def stereotype_rate(rates: np.ndarray) -> np.ndarray:
    """g_s = mean(R_8 … R_16) / mean(R_1 … R_7) over the last axis (length 16)."""
    r = np.asarray(rates, dtype=np.float64)
    return r[..., _M].mean(axis=-1) / r[..., _F].mean(axis=-1)


def inclinations(rates: np.ndarray, code: str) -> np.ndarray:
    """Per stereotype, baseline − R_s (2025-12, 2025-08) or R_s − baseline (2026-04), baseline
    = mean(R_1 … R_14)."""
    r = np.asarray(rates, dtype=np.float64)
    delta = r[:14].mean() - r
    return -delta if code == "2026-04" else delta


def eurogest_summary(
    scored: pd.DataFrame,
    *,
    lang: str,
    code: str,
    n_coinciding: int = 0,
    coinciding: str = "other",
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
    min_items: int | None = None,
) -> GestSummary:
    """R_s per stereotype and g_s of one language with percentile bootstrap CIs.

    Args:
        scored: one row per item with ``stereotype`` and ``r`` (NaN = unscored).
        lang, code, n_coinciding, coinciding: recorded in the summary.
        n_bootstrap: resamples (0: no intervals); seed and confidence_level as for GEST.
        min_items: least scored items per stereotype; None: 10 for code 2026-04, else 1.
    """
    if n_bootstrap < 0:
        raise WeatkitError(f"the number of bootstrap resamples must be >= 0, not {n_bootstrap}")
    if not 0.0 < confidence_level < 1.0:
        raise WeatkitError(f"the confidence level must be between 0 and 1, not {confidence_level}")
    r = scored["r"].to_numpy(dtype=np.float64)
    keep = ~np.isnan(r)
    table = scored.loc[keep]
    ids = list(STEREOTYPES)
    groups = [table.loc[table["stereotype"] == i, "r"].to_numpy(dtype=np.float64) for i in ids]
    least = min_items if min_items is not None else least_items(code)
    for i, g in zip(ids, groups, strict=True):
        if len(g) < least:
            raise WeatkitError(
                f"EuroGEST {lang}: stereotype {i} ({STEREOTYPES[i]}) has {len(g)} scored items; "
                f"g_s needs all 16{f' with at least {least} each' if least > 1 else ''}"
            )
    means = np.array([g.mean() for g in groups])
    boot, _ = bootstrap_distribution(
        groups, resample_indices([len(g) for g in groups], n_bootstrap, seed)
    )
    if n_bootstrap:
        r_low, r_high = percentile_interval(boot.T, confidence_level)
        g_low, g_high = percentile_interval(stereotype_rate(boot), confidence_level)
    else:
        r_low = r_high = np.full(16, np.nan)
        g_low = g_high = np.nan
    per = stereotype_frame()
    per["n"] = [len(g) for g in groups]
    per["R"], per["R_ci_low"], per["R_ci_high"] = means, r_low, r_high
    per["rank"] = rankdata(-means, method="average")
    per["inclination"] = inclinations(means, code)
    row = {
        "lang": lang,
        "code": code,
        "n_items": int(keep.sum()),
        "n_skipped": int((~keep).sum()),
        "n_coinciding": int(n_coinciding),
        "coinciding": coinciding,
        "g_s": float(stereotype_rate(means)),
        "g_s_ci_low": float(g_low),
        "g_s_ci_high": float(g_high),
        "n_bootstrap": n_bootstrap,
        "seed": seed,
        "ci_level": confidence_level,
    }
    return GestSummary(per[STEREOTYPE_COLUMNS], pd.DataFrame([row], columns=SUMMARY_COLUMNS))
