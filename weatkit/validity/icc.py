"""Intraclass correlations (Shrout & Fleiss 1979; McGraw & Wong 1996) with their F-based CIs.

n targets (units: models, items) are each scored by the same k raters (parallel lists,
templates, seeds), an n × k table x. The two-way ANOVA mean squares, with x̄_i· the target
means, x̄_·j the rater means and x̄ the grand mean:

    MSR = k Σ_i (x̄_i· − x̄)² / (n − 1)                          between targets
    MSC = n Σ_j (x̄_·j − x̄)² / (k − 1)                          between raters
    MSE = Σ_ij (x_ij − x̄_i· − x̄_·j + x̄)² / ((n − 1)(k − 1))    residual
    MSW = Σ_ij (x_ij − x̄_i·)² / (n (k − 1))                    within targets (one-way)

Single-rater (``ICC1``, ``ICC2``, ``ICC3``; Shrout & Fleiss' ICC(1,1), ICC(2,1), ICC(3,1)) and
average-of-k (``ICC1k``, ``ICC2k``, ``ICC3k``) forms:

    ICC(1,1) = (MSR − MSW) / (MSR + (k − 1) MSW)       ICC(1,k) = (MSR − MSW) / MSR
    ICC(2,1) = (MSR − MSE) / (MSR + (k − 1) MSE + k (MSC − MSE) / n)
    ICC(2,k) = (MSR − MSE) / (MSR + (MSC − MSE) / n)
    ICC(3,1) = (MSR − MSE) / (MSR + (k − 1) MSE)       ICC(3,k) = (MSR − MSE) / MSR

Model 1: each target rated by different raters (one-way random); 2: the raters are a random
sample (two-way random, absolute agreement); 3: these raters only (two-way mixed, consistency).
For parallel lists or templates drawn from many possible ones, ICC(2,·) is the usual choice;
ICC(3,·) ignores a constant shift between raters.

p-values test ICC = 0: F = MSR / MSW on (n − 1, n(k − 1)) df for model 1, F = MSR / MSE on
(n − 1, (n − 1)(k − 1)) df for models 2 and 3. Confidence intervals (level 1 − α, F_q(a, b) the
q quantile of the F distribution, q = 1 − α/2):

* model 1: F_L = F / F_q(n − 1, n(k − 1)), F_U = F · F_q(n(k − 1), n − 1);
  ICC(1,1) ∈ [(F_L − 1)/(F_L + k − 1), (F_U − 1)/(F_U + k − 1)], ICC(1,k) ∈ [1 − 1/F_L, 1 − 1/F_U]
* model 3: the same with df2 = (n − 1)(k − 1);
* model 2 (Satterthwaite's df ν; ρ = ICC(2,1), F_j = MSC / MSE):
  ν = (k − 1)(n − 1)(kρF_j + n(1 + (k − 1)ρ) − kρ)² / ((n − 1)k²ρ²F_j² + (n(1 + (k − 1)ρ) − kρ)²),
  F* = F_q(n − 1, ν), F** = F_q(ν, n − 1),
  low = n(MSR − F* MSE) / (F*(k MSC + (kn − k − n) MSE) + n MSR),
  high = n(F** MSR − MSE) / (k MSC + (kn − k − n) MSE + n F** MSR);
  ICC(2,k)'s bounds are these stepped up by Spearman–Brown, kb / (1 + (k − 1) b).

References: Shrout, P. E., & Fleiss, J. L. (1979). Intraclass correlations: uses in assessing
rater reliability. Psychological Bulletin 86(2), 420–428. McGraw, K. O., & Wong, S. P. (1996).
Forming inferences about some intraclass correlation coefficients. Psychological Methods 1(1),
30–46.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from weatkit.errors import ConfigError
from weatkit.validity._input import score_matrix
from weatkit.validity.reliability import spearman_brown

#: The forms of :func:`icc`, in Shrout & Fleiss' order.
ICC_KINDS: tuple[str, ...] = ("ICC1", "ICC2", "ICC3", "ICC1k", "ICC2k", "ICC3k")
_DESCRIPTIONS = {
    "ICC1": "one-way random, single rater",
    "ICC2": "two-way random, absolute agreement, single rater",
    "ICC3": "two-way mixed, consistency, single rater",
    "ICC1k": "one-way random, mean of k raters",
    "ICC2k": "two-way random, absolute agreement, mean of k raters",
    "ICC3k": "two-way mixed, consistency, mean of k raters",
}


@dataclass(frozen=True)
class ICCResult:
    """One intraclass correlation (module docstring).

    Attributes:
        kind: ``ICC1`` … ``ICC3k`` (:data:`ICC_KINDS`); ``description`` in words.
        statistic: the ICC.
        confidence_interval: its F-based interval; ``confidence_level`` its level.
        pvalue: of the F test of ICC = 0 (one-sided).
        f, df1, df2: the F statistic and its degrees of freedom.
        n_units, n_raters: n targets, k raters.
    """

    kind: str
    description: str
    statistic: float
    confidence_interval: tuple[float, float]
    confidence_level: float
    pvalue: float
    f: float
    df1: float
    df2: float
    n_units: int
    n_raters: int


@dataclass(frozen=True)
class MeanSquares:
    """The ANOVA mean squares of an n × k table (module docstring)."""

    msr: float
    msc: float
    mse: float
    msw: float
    n: int
    k: int


def mean_squares(values: np.ndarray) -> MeanSquares:
    """MSR, MSC, MSE and MSW of an ``(n, k)`` table (module docstring)."""
    n, k = values.shape
    grand = values.mean()
    rows = values.mean(axis=1, keepdims=True)
    cols = values.mean(axis=0, keepdims=True)
    ssr = k * ((rows - grand) ** 2).sum()
    ssc = n * ((cols - grand) ** 2).sum()
    sse = ((values - rows - cols + grand) ** 2).sum()
    return MeanSquares(
        msr=float(ssr / (n - 1)),
        msc=float(ssc / (k - 1)),
        mse=float(sse / ((n - 1) * (k - 1))),
        msw=float((ssc + sse) / (n * (k - 1))),
        n=n,
        k=k,
    )


def icc(
    scores: pd.DataFrame | Mapping[str, pd.Series] | np.ndarray,
    *,
    confidence_level: float = 0.95,
) -> dict[str, ICCResult]:
    """The six intraclass correlations of n units scored by k raters, by kind.

    Args:
        scores: units (targets) in rows, raters (lists, templates, seeds) in columns; at least
            2 of each, no missing value.
        confidence_level: level of the F-based intervals.

    Returns:
        :data:`ICC_KINDS` -> :class:`ICCResult`.

    Raises:
        DataError: fewer than 2 raters or units, mismatched units, a missing value.

    Example (Shrout & Fleiss 1979, Table 2: 6 targets, 4 judges):
        >>> x = [[9, 2, 5, 8], [6, 1, 3, 2], [8, 4, 6, 8], [7, 1, 2, 6], [10, 5, 6, 9],
        ...      [6, 2, 4, 7]]
        >>> {kind: round(r.statistic, 2) for kind, r in icc(x).items()}
        {'ICC1': 0.17, 'ICC2': 0.29, 'ICC3': 0.71, 'ICC1k': 0.44, 'ICC2k': 0.62, 'ICC3k': 0.91}
    """
    if not 0 < confidence_level < 1:
        raise ConfigError(
            f"must be between 0 and 1, got {confidence_level}", field="confidence_level"
        )
    from scipy import stats  # imported when used: slow (a run without --reliability needs none)

    values, _ = score_matrix(scores, what="the intraclass correlation", columns="raters")
    ms = mean_squares(values)
    n, k = ms.n, ms.k
    q = 1.0 - (1.0 - confidence_level) / 2.0

    def result(kind: str, value: float, interval: tuple[float, float], f: float, df2: int):
        return ICCResult(
            kind=kind,
            description=_DESCRIPTIONS[kind],
            statistic=float(value),
            confidence_interval=(float(interval[0]), float(interval[1])),
            confidence_level=confidence_level,
            pvalue=float(stats.f.sf(f, n - 1, df2)),
            f=float(f),
            df1=float(n - 1),
            df2=float(df2),
            n_units=n,
            n_raters=k,
        )

    out: list[ICCResult] = []
    with np.errstate(divide="ignore", invalid="ignore"):
        for model, error, df2 in ((1, ms.msw, n * (k - 1)), (3, ms.mse, (n - 1) * (k - 1))):
            f = ms.msr / error
            fl, fu = f / stats.f.ppf(q, n - 1, df2), f * stats.f.ppf(q, df2, n - 1)
            single = (ms.msr - error) / (ms.msr + (k - 1) * error)
            bounds = ((fl - 1) / (fl + k - 1), (fu - 1) / (fu + k - 1))
            out.append(result(f"ICC{model}", single, bounds, f, df2))
            average = (ms.msr - error) / ms.msr
            out.append(result(f"ICC{model}k", average, (1 - 1 / fl, 1 - 1 / fu), f, df2))
        f, df2 = ms.msr / ms.mse, (n - 1) * (k - 1)
        rho = (ms.msr - ms.mse) / (ms.msr + (k - 1) * ms.mse + k * (ms.msc - ms.mse) / n)
        low, high = _icc2_interval(ms, rho, q)
        out.append(result("ICC2", rho, (low, high), f, df2))
        average = (ms.msr - ms.mse) / (ms.msr + (ms.msc - ms.mse) / n)
        stepped = (spearman_brown(low, k), spearman_brown(high, k))
        out.append(result("ICC2k", average, stepped, f, df2))  # type: ignore[arg-type]
    by_kind = {r.kind: r for r in out}
    return {kind: by_kind[kind] for kind in ICC_KINDS}


def _icc2_interval(ms: MeanSquares, rho: float, q: float) -> tuple[float, float]:
    """ICC(2,1)'s interval with Satterthwaite's degrees of freedom (module docstring)."""
    from scipy import stats

    n, k = ms.n, ms.k
    fj = ms.msc / ms.mse
    a = n * (1 + (k - 1) * rho) - k * rho
    nu = (k - 1) * (n - 1) * (k * rho * fj + a) ** 2 / ((n - 1) * k**2 * rho**2 * fj**2 + a**2)
    f_star, f_2star = stats.f.ppf(q, n - 1, nu), stats.f.ppf(q, nu, n - 1)
    shared = k * ms.msc + (k * n - k - n) * ms.mse
    low = n * (ms.msr - f_star * ms.mse) / (f_star * shared + n * ms.msr)
    high = n * (f_2star * ms.msr - ms.mse) / (shared + n * f_2star * ms.msr)
    return float(low), float(high)
