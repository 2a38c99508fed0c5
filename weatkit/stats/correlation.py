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

Pearson's r = Σ (x_i − x̄)(y_i − ȳ) / √(Σ (x_i − x̄)² Σ (y_i − ȳ)²) is available for measures on
an interval scale (:func:`weatkit.isomorphism.across_languages.correlation_table`).

**Small numbers of units.** The p-value of each statistic T is a permutation test of
independence (Pitman 1937): the null distribution is T over re-pairings of x with y,
``scipy.stats.permutation_test(..., permutation_type="pairings")``, two-sided as
p = min(1, 2 · min(P(T* ≥ t), P(T* ≤ t))). With n ≤ :data:`EXACT_MAX_UNITS` units the test is
exact (all n! pairings, P counted over them); above that it draws :data:`N_PERMUTATIONS` seeded
pairings, P = (#{T* ≥ t} + 1) / (B + 1) (Phipson & Smyth 2010). No asymptotic formula is used:
with 3 units the t approximation of ``scipy.stats.spearmanr`` gives p = 0 for ρ = 1, whereas
only 6 pairings exist and the exact p is 2/6.

Because the most extreme pairing has probability 1/n!, no test of n units can give p below 2/n!
(two-sided; ties only raise it). :func:`min_units` is the fewest units at which p ≤ α is
possible at all, α = 1 − confidence level: 5 at 95% (2/5! = 0.017, while 2/4! = 0.083), 6 at
99%. Below it a correlation is reported but flagged (``flag``); so is a bootstrap interval that
is degenerate (low = high: with 3 units every resample with two distinct values gives the same
ρ = ±1, so ``[1.000, 1.000]`` measures nothing), and so is a statistic whose interval excludes 0
while its permutation p is above α: with few units and ties the percentile bootstrap is too
narrow (6 units x = (2, 1, 1, 0, 0, 0), y = (0, 0, 0, 3, 2, 3): ρ = −0.90, 95% CI
[−1.00, −0.71], exact p = 0.10). :func:`is_significant` is the one rule for a star: the
interval excludes 0 (and is not degenerate), p ≤ α, and the row is not flagged.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from math import factorial

import numpy as np
import pandas as pd

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
    "spearman_p",
    "kendall_p",
    "permutation_method",
    "n_permutations",
    "n_min",
    "flag",
]
#: Fewest common units for a correlation to be computed at all (two points always give ±1).
MIN_UNITS = 3
#: Up to this many units the permutation p is exact (all n! pairings; 8! = 40,320).
EXACT_MAX_UNITS = 8
#: Seeded random pairings for the permutation p above :data:`EXACT_MAX_UNITS` units.
N_PERMUTATIONS = 9999


def pearson_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Pearson's r of each row pair of ``(B, n)`` arrays (NaN where a row is constant)."""
    dx = x - x.mean(axis=-1, keepdims=True)
    dy = y - y.mean(axis=-1, keepdims=True)
    constant = (np.ptp(x, axis=-1) == 0) | (np.ptp(y, axis=-1) == 0)
    denominator = np.sqrt((dx * dx).sum(axis=-1) * (dy * dy).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.clip((dx * dy).sum(axis=-1) / denominator, -1.0, 1.0)
    return np.where(constant, np.nan, r)


def spearman_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Spearman's ρ of each row pair of ``(B, n)`` arrays (NaN where a row is constant)."""
    from scipy import stats  # imported when used: slow (a run's screen tables need none of it)

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


#: The vectorised statistics by name (each maps two ``(B, n)`` arrays to ``B`` values).
STATISTICS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "pearson": pearson_rows,
    "spearman": spearman_rows,
    "kendall": kendall_rows,
}
_NAMES = {"pearson": "Pearson r", "spearman": "Spearman ρ", "kendall": "Kendall τ_b"}


def min_units(confidence_level: float) -> int:
    """Fewest units at which a two-sided test at α = 1 − ``confidence_level`` can reject.

    The smallest n ≥ :data:`MIN_UNITS` with 2/n! ≤ α: the most extreme of the n! pairings has
    permutation probability 1/n!, so the exact two-sided p of n units is at least 2/n!
    (5 units at 95%, 6 at 99%).
    """
    alpha = 1.0 - confidence_level
    n = MIN_UNITS
    while 2.0 / factorial(n) > alpha:
        n += 1
    return n


def permutation_p(
    x: np.ndarray, y: np.ndarray, statistic: str, *, seed: int = 0
) -> tuple[float, str, int]:
    """Two-sided permutation p of ``statistic`` (``pearson``, ``spearman``, ``kendall``).

    p = min(1, 2 · min(P(T* ≤ t), P(T* ≥ t))) over re-pairings of ``x`` with ``y``
    (``scipy.stats.permutation_test``, ``permutation_type="pairings"``): all n! when
    n ≤ :data:`EXACT_MAX_UNITS`, else :data:`N_PERMUTATIONS` pairings drawn with ``seed``.

    Returns:
        ``(p, method, n_permutations)``, method ``exact`` or ``monte-carlo``; p is NaN when x
        or y is constant.
    """
    rows = STATISTICS[statistic]
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(x)
    exact = n <= EXACT_MAX_UNITS
    n_permutations = factorial(n) if exact else N_PERMUTATIONS
    method = "exact" if exact else "monte-carlo"
    if n < 2 or np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), method, n_permutations

    if statistic == "kendall":  # y is fixed: its signs and both norms are computed once
        upper = np.triu_indices(n, 1)
        sy = np.sign(y[upper[0]] - y[upper[1]])
        sx_norm = np.count_nonzero(x[upper[0]] != x[upper[1]])
        scale = np.sqrt(sx_norm * np.count_nonzero(sy))

        def rows(xs: np.ndarray, _: np.ndarray) -> np.ndarray:
            return (np.sign(xs[:, upper[0]] - xs[:, upper[1]]) @ sy) / scale

    def vectorised(xs: np.ndarray, axis: int = -1) -> np.ndarray:
        xs = np.moveaxis(xs, axis, -1)
        batch = xs.reshape(-1, n)
        return rows(batch, np.broadcast_to(y, batch.shape)).reshape(xs.shape[:-1])

    from scipy import stats

    result = stats.permutation_test(
        (x,),
        vectorised,
        permutation_type="pairings",
        vectorized=True,
        n_resamples=np.inf if exact else N_PERMUTATIONS,
        batch=max(1, 4_000_000 // (n * n)),  # sign matrices of Kendall's τ: B × n × n
        rng=np.random.default_rng(seed),
    )
    return float(result.pvalue), method, n_permutations


def small_sample_flag(
    n: int,
    confidence_level: float,
    degenerate: Sequence[str] = (),
    p_above_alpha: Mapping[str, float] | None = None,
) -> str:
    """Why a correlation of ``n`` units cannot be read as significant ('' when it can).

    ``degenerate`` names the statistics whose bootstrap interval has low = high;
    ``p_above_alpha`` maps each statistic whose interval excludes 0 while its permutation p is
    above α = 1 − ``confidence_level`` to that p. Every reason withholds the star
    (:func:`is_significant`) from every statistic of the row.
    """
    reasons = []
    alpha = 1.0 - confidence_level
    n_min = min_units(confidence_level)
    if n < n_min:
        reasons.append(
            f"n={n} < {n_min}: the smallest possible p is 2/{n}! = {2 / factorial(n):.3f} "
            f"> {alpha:g}"
        )
    if degenerate:
        names = ", ".join(_NAMES[name] for name in degenerate)
        reasons.append(f"degenerate CI of {names} (every resample gives one value)")
    if p_above_alpha:
        names = ", ".join(_NAMES[name] for name in p_above_alpha)
        ps = ", ".join(f"{p:.3f}" for p in p_above_alpha.values())
        reasons.append(
            f"CI of {names} excludes 0 but permutation p = {ps} > {alpha:g} (the percentile "
            "bootstrap is too narrow with few units or ties)"
        )
    return "; ".join(reasons)


def degenerate_interval(low: float, high: float) -> bool:
    """Whether a defined interval has no width (high − low ≤ 1e-12)."""
    return bool(np.isfinite(low) and np.isfinite(high) and high - low <= 1e-12)


def excludes_zero(low: float, high: float) -> bool:
    """Whether ``[low, high]`` is defined, not degenerate (:func:`degenerate_interval`) and
    has 0 outside it."""
    if not (np.isfinite(low) and np.isfinite(high)) or degenerate_interval(low, high):
        return False
    return bool(low > 0 or high < 0)


def is_significant(
    p: float,
    flag: object,
    confidence_level: float,
    interval: tuple[float, float] | None = None,
) -> bool:
    """The one rule for a star on a correlation: p ≤ α = 1 − ``confidence_level``, the row not
    flagged (:func:`small_sample_flag`; a missing ``flag``, NaN as read from a CSV, is none),
    and, when the table has intervals, ``interval`` excludes 0 (:func:`excludes_zero`).

    ``interval`` is ``None`` only for a table computed without intervals (the isomorphism
    correlations, ``n_bootstrap = 0``); a NaN interval is an undefined one and never starred.
    """
    if isinstance(flag, str) and flag:
        return False
    if not (isinstance(p, float | int | np.floating) and np.isfinite(p)):
        return False
    if p > 1.0 - confidence_level + 1e-12:
        return False
    return interval is None or excludes_zero(*interval)


def correlate_pair(
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_bootstrap: int,
    seed: int,
    confidence_level: float,
    statistics: Sequence[str] = ("spearman", "kendall"),
) -> dict[str, float | int | str]:
    """Each statistic with its permutation p and bootstrap interval, for paired ``x``, ``y``.

    Keys: ``n``; per statistic ``NAME``, ``NAME_p`` (:func:`permutation_p`, seeded with
    ``seed``), ``NAME_ci_low``, ``NAME_ci_high`` (NaN with ``n_bootstrap`` 0); ``n_degenerate``
    (resamples where a statistic is undefined), ``permutation_method``, ``n_permutations``,
    ``n_min`` (:func:`min_units`) and ``flag`` (:func:`small_sample_flag`: too few units, a
    degenerate interval, an interval excluding 0 with p > α).
    """
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n = len(x)
    nan = float("nan")
    out: dict[str, float | int | str] = {"n": n}
    for name in statistics:
        out[name] = float(STATISTICS[name](x[None], y[None])[0])
        out[f"{name}_p"], method, n_permutations = permutation_p(x, y, name, seed=seed)
    degenerate_ci: list[str] = []
    p_above_alpha: dict[str, float] = {}
    if n_bootstrap > 0:
        rows = one_sample_bootstrap(n, n_bootstrap, seed=seed)
        values = {name: STATISTICS[name](x[rows], y[rows]) for name in statistics}
        degenerate = np.zeros(n_bootstrap, dtype=bool)
        for resampled in values.values():
            degenerate |= np.isnan(resampled)
        out["n_degenerate"] = int(degenerate.sum())
        for name, resampled in values.items():
            kept = resampled[~degenerate]
            low, high = percentile_interval(kept, confidence_level) if kept.size else (nan, nan)
            out[f"{name}_ci_low"], out[f"{name}_ci_high"] = float(low), float(high)
            if degenerate_interval(low, high):
                degenerate_ci.append(name)
            p = float(out[f"{name}_p"])
            if excludes_zero(low, high) and p > 1.0 - confidence_level + 1e-12:
                p_above_alpha[name] = p
    else:
        out.update({f"{m}_ci_{e}": nan for m in statistics for e in ("low", "high")})
        out["n_degenerate"] = 0
    out["permutation_method"] = method
    out["n_permutations"] = n_permutations
    out["n_min"] = min_units(confidence_level)
    out["flag"] = small_sample_flag(n, confidence_level, degenerate_ci, p_above_alpha)
    return out


def pearson_spearman(
    x: np.ndarray, y: np.ndarray, *, confidence_level: float, seed: int
) -> dict[str, float | int | str]:
    """Pearson's r and Spearman's ρ of paired ``x``, ``y`` with permutation p-values and no
    intervals (:func:`correlate_pair`), under the names of the across-language tables:
    ``pearson_r, pearson_p, spearman_rho, spearman_p, permutation_method, n_permutations,
    n_min, flag``. Fewer than :data:`MIN_UNITS` pairs or a constant variable give NaN with
    the reason in ``flag``. Used by the isomorphism and the asymmetry correlations."""
    if len(x) < MIN_UNITS or np.ptp(x) == 0 or np.ptp(y) == 0:
        why = (
            f"n={len(x)} < {MIN_UNITS}: no correlation"
            if len(x) < MIN_UNITS
            else "one variable is constant: no correlation"
        )
        keys = ("pearson_r", "pearson_p", "spearman_rho", "spearman_p", "n_permutations")
        return dict.fromkeys(keys, float("nan")) | {
            "permutation_method": "",
            "n_min": min_units(confidence_level),
            "flag": why,
        }
    both = correlate_pair(
        x,
        y,
        n_bootstrap=0,
        seed=seed,
        confidence_level=confidence_level,
        statistics=("pearson", "spearman"),
    )
    return {
        "pearson_r": float(both["pearson"]),
        "pearson_p": float(both["pearson_p"]),
        "spearman_rho": float(both["spearman"]),
        "spearman_p": float(both["spearman_p"]),
        **{k: both[k] for k in ("permutation_method", "n_permutations", "n_min", "flag")},
    }


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
        seed: seed of the resampling and of the Monte Carlo permutations (the same draws for
            every pair with the same ``n``).
        confidence_level: confidence level of the intervals.

    Returns:
        :data:`CORRELATION_COLUMNS`; only pairs with at least :data:`MIN_UNITS` units where
        both measures are present. ``spearman_p`` and ``kendall_p`` are permutation p-values
        (exact up to :data:`EXACT_MAX_UNITS` units); ``flag`` says why a row cannot be read
        as significant (fewer than ``n_min`` units, a degenerate interval, an interval that
        excludes 0 while p > α), '' otherwise; :func:`is_significant` is the rule for a star.
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
