"""Confidence intervals: bootstrap percentile (default) and BCa; Agresti–Coull for proportions.

Percentile: the (α/2, 1 − α/2) quantiles of the bootstrap distribution (linear interpolation,
NumPy's default), α = 1 − confidence level. They are taken from the two pairs of order statistics
they interpolate, found by selection (:func:`linear_quantiles`).

BCa (Efron 1987; Efron & Tibshirani 1993, §14.3), with the multi-sample jackknife used by
``scipy.stats.bootstrap``:

* bias correction z₀ = Φ⁻¹(p̂), p̂ = (#{θ* < θ̂} + #{θ* ≤ θ̂}) / (2B)
* acceleration a = Σ_j Σ_i U_ji³ / n_j³ / (6 (Σ_j Σ_i U_ji² / n_j²)^{3/2}), where for each sample j
  (X, Y, A, B) U_ji = (n_j − 1)(θ̄_j· − θ_j(i)) and θ_j(i) leaves item i of sample j out
* interval = quantiles at Φ(z₀ + (z₀ + z_q) / (1 − a (z₀ + z_q))) for q = α/2 and 1 − α/2.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy.special import ndtr, ndtri

from weatkit.errors import WeatkitError


def percentile_interval(
    distribution: np.ndarray, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """``(low, high)`` per row of a ``(T, R)`` bootstrap distribution (NaN resamples ignored);
    of an ``(R,)`` one, two scalars."""
    if distribution.ndim == 1:
        low, high = percentile_interval(distribution[None, :], confidence_level)
        return low[0], high[0]
    alpha = 1.0 - confidence_level
    q = [alpha / 2, 1 - alpha / 2]
    low, high = linear_quantiles(distribution, q)
    with_nan = np.isnan(distribution).any(axis=-1)
    if with_nan.any():  # nanquantile goes row by row: only where it is needed
        low[with_nan], high[with_nan] = np.nanquantile(distribution[with_nan], q, axis=-1)
    return low, high


def linear_quantiles(distribution: np.ndarray, q: Sequence[float]) -> np.ndarray:
    """``np.quantile(distribution, q, axis=-1)``, bit for bit: ``(len(q), T)`` from ``(T, R)``.

    NumPy's linear rule: with h = (R − 1) q, j = ⌊h⌋ and γ = h − j, the quantile interpolates the
    order statistics x₍ⱼ₎ and x₍ⱼ₊₁₎ (0-based, j and j + 1 clipped to [0, R − 1]), as
    x₍ⱼ₎ + (x₍ⱼ₊₁₎ − x₍ⱼ₎) γ, or x₍ⱼ₊₁₎ − (x₍ⱼ₊₁₎ − x₍ⱼ₎)(1 − γ) when γ ≥ 0.5. Only those order
    statistics are selected (:func:`_order_statistics`), where ``np.quantile`` also partitions
    around the first and last positions. A row with a NaN gives NaN, as in ``np.quantile``.
    """
    n = distribution.shape[-1]
    h = (n - 1) * np.asarray(q, dtype=np.float64)
    j = np.floor(h)
    above, below = h >= n - 1, h < 0
    j[above], j[below] = -1, 0  # NumPy's indices: -1 is the last
    gamma = h - j
    nxt = np.where(above, -1, np.where(below, 0, j + 1)).astype(np.intp)
    j = j.astype(np.intp)
    wanted = sorted({int(k) % n for k in (*j, *nxt)})
    stats = dict(zip(wanted, _order_statistics(distribution, wanted), strict=True))
    a = np.stack([stats[int(k) % n] for k in j])
    b = np.stack([stats[int(k) % n] for k in nxt])
    diff = b - a
    t = gamma[:, None]
    out = a + diff * t
    np.subtract(b, diff * (1 - t), out=out, where=t >= 0.5)
    out[:, np.isnan(distribution).any(axis=-1)] = np.nan
    return out


def _order_statistics(x: np.ndarray, ks: Sequence[int]) -> list[np.ndarray]:
    """``np.sort(x, axis=-1)[:, k]`` for each of the increasing positions ``ks``, by selection:
    each position a partition of what lies above the previous one, or its minimum when it is
    the next position (O(R) per row and position, no sort)."""
    out = []
    rest, base = x, 0  # rest: the order statistics from position base on, in any order
    for k in ks:
        if k == base:
            out.append(rest.min(axis=-1))
            continue
        part = np.partition(rest, k - base, axis=-1)
        out.append(part[:, k - base])
        rest, base = part[:, k - base + 1 :], k + 1
    return out


def bca_acceleration(jackknife: Sequence[np.ndarray]) -> np.ndarray:
    """Acceleration a from per-sample leave-one-out statistics, each ``(T, n_j)``."""
    num = np.zeros(jackknife[0].shape[0])
    den = np.zeros(jackknife[0].shape[0])
    for theta_i in jackknife:
        n = theta_i.shape[-1]
        u = (n - 1) * (theta_i.mean(axis=-1, keepdims=True) - theta_i)
        num += (u**3).sum(axis=-1) / n**3
        den += (u**2).sum(axis=-1) / n**2
    with np.errstate(divide="ignore", invalid="ignore"):
        return num / (6.0 * den**1.5)


def bca_interval(
    distribution: np.ndarray,
    observed: np.ndarray,
    jackknife: Sequence[np.ndarray],
    confidence_level: float,
) -> tuple[np.ndarray, np.ndarray]:
    """BCa ``(low, high)`` per row of a ``(T, R)`` bootstrap distribution."""
    obs = observed[:, None]
    valid = ~np.isnan(distribution)
    n_valid = valid.sum(axis=-1)
    below = ((distribution < obs) & valid).sum(axis=-1)
    at_or_below = ((distribution <= obs) & valid).sum(axis=-1)
    z0 = ndtri((below + at_or_below) / (2.0 * n_valid))
    a = bca_acceleration(jackknife)
    alpha = 1.0 - confidence_level
    lows, highs = [], []
    for row, (z, acc) in enumerate(zip(z0, a, strict=True)):
        q = []
        for z_q in (ndtri(alpha / 2), ndtri(1 - alpha / 2)):
            q.append(ndtr(z + (z + z_q) / (1 - acc * (z + z_q))))
        if not np.all(np.isfinite(q)):
            lows.append(np.nan)
            highs.append(np.nan)
            continue
        lo, hi = np.nanquantile(distribution[row], q)
        lows.append(lo)
        highs.append(hi)
    return np.asarray(lows), np.asarray(highs)


def agresti_coull_interval(
    successes: Sequence[int] | np.ndarray | int,
    trials: Sequence[int] | np.ndarray | int,
    confidence_level: float = 0.95,
) -> tuple[np.ndarray, np.ndarray]:
    """Agresti & Coull (1998) interval of a binomial proportion x / n.

    z = Φ⁻¹(1 − α/2), ñ = n + z², p̃ = (x + z²/2) / ñ, interval p̃ ± z √(p̃ (1 − p̃) / ñ), clipped to
    [0, 1] as ``statsmodels.stats.proportion.proportion_confint(method="agresti_coull")`` does;
    NaN where n = 0.
    """
    if not 0.0 < confidence_level < 1.0:
        raise WeatkitError(
            f"the confidence level must be between 0 and 1, not {confidence_level}"
        )
    x = np.asarray(successes, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    z = ndtri(1.0 - (1.0 - confidence_level) / 2.0)
    n_tilde = n + z**2
    p_tilde = (x + z**2 / 2.0) / n_tilde
    half = z * np.sqrt(p_tilde * (1.0 - p_tilde) / n_tilde)
    empty = n == 0
    low = np.where(empty, np.nan, np.clip(p_tilde - half, 0.0, 1.0))
    high = np.where(empty, np.nan, np.clip(p_tilde + half, 0.0, 1.0))
    return low, high
