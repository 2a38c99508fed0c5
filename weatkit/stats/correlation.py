"""Rank correlations between bias measures across models, with bootstrap intervals.

For two measures observed on the same ``n`` units (a unit is one model in one language), the
point estimates are

* Spearman's ρ: the Pearson correlation of the ranks (average ranks for ties),
  :func:`scipy.stats.spearmanr`;
* Kendall's τ_b = Σ_{i≠j} sgn(x_i − x_j) sgn(y_i − y_j) /
  √(Σ_{i≠j} sgn(x_i − x_j)² · Σ_{i≠j} sgn(y_i − y_j)²), which accounts for ties
  (Kendall 1945; :func:`scipy.stats.kendalltau`, ``variant="b"``).

The interval is the percentile bootstrap over units: ``B`` seeded resamples of the ``n`` units
with replacement, paired (one draw of the units indexes both measures;
:func:`weatkit.stats.resampling.one_sample_bootstrap`); each statistic is recomputed on every
resample at once, as tensor operations (ranks along the resample axis, sign matrices of shape
``B × n × n``). Resamples in which one measure is constant leave the statistic undefined; they
are dropped from the percentiles and counted in ``n_degenerate``.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from weatkit.errors import WeatkitError
from weatkit.stats.intervals import percentile_interval
from weatkit.stats.resampling import one_sample_bootstrap

#: Columns of :func:`correlation_table`.
CORRELATION_COLUMNS = [
    "scope",
    "measure_x",
    "measure_y",
    "n",
    "spearman",
    "spearman_ci_low",
    "spearman_ci_high",
    "kendall",
    "kendall_ci_low",
    "kendall_ci_high",
    "n_degenerate",
]
#: Fewest common units for a correlation.
MIN_UNITS = 3


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row pair of ``(B, n)`` arrays (NaN where a row is constant)."""
    rx = stats.rankdata(x, axis=-1)
    ry = stats.rankdata(y, axis=-1)
    return _pearson_rows(rx, ry)


def kendall_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's τ_b of each row pair of ``(B, n)`` arrays (NaN where a row is constant)."""
    sx = np.sign(x[:, :, None] - x[:, None, :])
    sy = np.sign(y[:, :, None] - y[:, None, :])
    numerator = (sx * sy).sum(axis=(1, 2))
    denominator = np.sqrt((sx * sx).sum(axis=(1, 2)) * (sy * sy).sum(axis=(1, 2)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 0, numerator / denominator, np.nan)


def _pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    denominator = np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(denominator > 1e-12, (dx * dy).sum(axis=-1) / denominator, np.nan)


def correlate_pair(
    x: np.ndarray, y: np.ndarray, *, n_bootstrap: int, seed: int, confidence_level: float
) -> dict[str, float]:
    """ρ, τ_b and their percentile bootstrap intervals for paired observations ``x``, ``y``."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(x)
    out: dict[str, float] = {
        "n": n,
        "spearman": float(spearman_rows(x[None], y[None])[0]),
        "kendall": float(kendall_rows(x[None], y[None])[0]),
    }
    nan = float("nan")
    if n_bootstrap > 0:
        rows = one_sample_bootstrap(n, n_bootstrap, seed=seed)
        rho = spearman_rows(x[rows], y[rows])
        tau = kendall_rows(x[rows], y[rows])
        degenerate = np.isnan(rho) | np.isnan(tau)
        out["n_degenerate"] = int(degenerate.sum())
        for name, values in (("spearman", rho), ("kendall", tau)):
            kept = values[~degenerate]
            low, high = (
                percentile_interval(kept, confidence_level) if kept.size else (nan, nan)
            )
            out[f"{name}_ci_low"], out[f"{name}_ci_high"] = float(low), float(high)
    else:
        out.update({f"{m}_ci_{e}": nan for m in ("spearman", "kendall") for e in ("low", "high")})
        out["n_degenerate"] = 0
    return out


def correlation_table(
    wide: pd.DataFrame,
    measures: list[str],
    *,
    by_language: bool = True,
    n_bootstrap: int = 2000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> pd.DataFrame:
    """Spearman and Kendall correlations of every pair of ``measures`` across the units.

    Args:
        wide: one row per unit with ``model``, ``lang`` and one column per measure (NaN where
            the measure is not available for that model and language).
        measures: the measure columns to correlate.
        by_language: besides ``scope == "all"`` (every unit), correlate within each language
            (when there are several).
        n_bootstrap: bootstrap resamples of the units (0: no intervals).
        seed: seed of the resampling (the same draws for every pair with the same ``n``).
        confidence_level: confidence level of the intervals.

    Returns:
        :data:`CORRELATION_COLUMNS`; only pairs with at least :data:`MIN_UNITS` units where
        both measures are present.
    """
    if n_bootstrap < 0:
        raise WeatkitError(f"bootstrap resamples must be >= 0, not {n_bootstrap}")
    if not 0 < confidence_level < 1:
        raise WeatkitError(
            f"the confidence level must be between 0 and 1, not {confidence_level}"
        )
    scopes = [("all", wide)]
    if by_language and wide["lang"].nunique() > 1:
        scopes += [(str(lang), part) for lang, part in wide.groupby("lang", sort=True)]
    rows = []
    for scope, part in scopes:
        for mx, my in combinations(measures, 2):
            both = part[[mx, my]].dropna()
            if len(both) < MIN_UNITS:
                continue
            values = correlate_pair(
                both[mx].to_numpy(),
                both[my].to_numpy(),
                n_bootstrap=n_bootstrap,
                seed=seed,
                confidence_level=confidence_level,
            )
            rows.append({"scope": scope, "measure_x": mx, "measure_y": my, **values})
    return pd.DataFrame(rows, columns=CORRELATION_COLUMNS)
