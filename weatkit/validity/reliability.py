"""Split-half reliability with the Spearman–Brown correction, over parallel forms.

Parallel forms are k measurements of the same thing on the same n units: the parallel lists of a
language in CA-WEAT (up to 24), the templates of GEST, the seeds (checkpoints) of a model
(test–retest). Scores form an n × k table X (units in rows, forms in columns).

**Spearman–Brown** (Spearman 1910; Brown 1910). A test lengthened k-fold with parallel parts
whose reliability is r has reliability

    r_k = k·r / (1 + (k − 1)·r),   and for two halves (k = 2)   r_SB = 2r / (1 + r).

**Split-half reliability.** A split puts ⌊k/2⌋ forms in half A and the rest in half B; each
unit's half score is the mean of its forms in that half, and r is Pearson's correlation of the
two half scores across the units, stepped up to the full length with r_SB = 2r / (1 + r). One
split is arbitrary, so the statistic is the mean of r_SB over many splits, as is standard
(Cronbach 1951 showed that the mean over all splits is the natural single figure): every
distinct split when there are at most ``n_splits``, else ``n_splits`` seeded random ones
(:func:`weatkit.stats.resampling.split_half_plan`). With odd k the halves differ by one form
and r_SB slightly understates the reliability of the whole.

**Interval.** A percentile bootstrap over the units (Efron & Tibshirani 1993): B resamples of
the n units with replacement (:func:`weatkit.stats.resampling.one_sample_bootstrap`, seed
``seed``), the same splits in every resample; a resample in which, for some split, a half
score is constant (r undefined, e.g. one unit drawn n times) is dropped and counted in
``n_degenerate``. Such splits of the data themselves are left out of the mean.

**Below −1.** r_SB is the correlation predicted between two full-length forms, so it cannot lie
below −1; the formula leaves that range for r < −1/3 and tends to −∞ as r → −1 (two distinct
units; or two near-identical ones and a third, as spaces a rotation apart give the same d up to
float32 rounding, r = −1 + 3e-11). One such split would swamp the mean, so r_SB is taken as
max(2r / (1 + r), −1): a split whose halves disagree that much counts as −1.

References: Spearman, C. (1910). Correlation calculated from faulty data. British Journal of
Psychology 3, 271–295. Brown, W. (1910). Some experimental results in the correlation of mental
abilities. British Journal of Psychology 3, 296–322. Cronbach, L. J. (1951). Coefficient alpha
and the internal structure of tests. Psychometrika 16, 297–334.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from math import comb

import numpy as np
import pandas as pd

from weatkit.errors import ConfigError, DataError
from weatkit.stats.correlation import pearson_rows
from weatkit.stats.intervals import percentile_interval
from weatkit.stats.resampling import check_plan_size, one_sample_bootstrap, split_half_plan
from weatkit.validity._input import score_matrix

#: Splits averaged by default (every distinct split of up to 10 forms: C(10, 5)/2 = 126).
N_SPLITS = 200


def spearman_brown(r: float | np.ndarray, k: float = 2.0) -> float | np.ndarray:
    """Reliability of a test k times as long as one of reliability ``r``:
    r_k = k·r / (1 + (k − 1)·r); k = 2 steps a half up to the whole (2r / (1 + r)).

    Example:
        >>> spearman_brown(0.5), spearman_brown(0.5, 3)
        (0.6666666666666666, 0.75)
    """
    if not k > 0:
        raise ConfigError(f"must be > 0, got {k}", field="k")
    r_arr = np.asarray(r, dtype=np.float64)
    if np.any(np.abs(r_arr[np.isfinite(r_arr)]) > 1):
        raise DataError(f"a correlation lies in [-1, 1], got {r}")
    with np.errstate(divide="ignore", invalid="ignore"):
        out = k * r_arr / (1.0 + (k - 1.0) * r_arr)
    return float(out) if out.ndim == 0 else out


@dataclass(frozen=True)
class SplitHalfResult:
    """Split-half reliability of k parallel forms on n units (module docstring).

    Attributes:
        statistic: mean over the splits of r_SB = max(2r / (1 + r), −1) (splits where it is
            undefined left out).
        confidence_interval: percentile bootstrap interval over the units (NaN, NaN without
            resamples).
        confidence_level: its level.
        r_half: mean over the splits of the uncorrected half correlation r.
        n_units, n_forms: the table's shape.
        n_splits: splits averaged; ``exact`` whether they are every distinct split.
        n_bootstrap: unit resamples; ``n_degenerate`` those dropped (r undefined).
        seed: seed of the splits and of the resamples.
    """

    statistic: float
    confidence_interval: tuple[float, float]
    confidence_level: float
    r_half: float
    n_units: int
    n_forms: int
    n_splits: int
    exact: bool
    n_bootstrap: int
    n_degenerate: int
    seed: int


def split_half(
    scores: pd.DataFrame | Mapping[str, pd.Series] | np.ndarray,
    *,
    n_splits: int = N_SPLITS,
    n_bootstrap: int = 2000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> SplitHalfResult:
    """Split-half reliability with the Spearman–Brown correction, averaged over splits.

    Args:
        scores: units in rows, parallel forms in columns (a table, an array, or form name ->
            scores by unit); at least 2 forms and 2 units, no missing value.
        n_splits: splits to average (every distinct split when there are at most this many).
        n_bootstrap: bootstrap resamples of the units (0: no interval).
        seed: seed of the random splits and of the resamples.
        confidence_level: level of the interval.

    Raises:
        DataError: fewer than 2 forms or units, mismatched units, a missing value.
        ConfigError: a bad ``n_splits``, ``n_bootstrap`` or ``confidence_level``.

    Example:
        >>> X = np.array([[1, 2, 1, 2], [3, 3, 4, 4], [5, 6, 5, 7], [2, 2, 3, 1]])
        >>> round(split_half(X, n_bootstrap=0).statistic, 4)
        0.9703
    """
    values, _ = score_matrix(scores, what="split-half reliability", columns="forms")
    if n_bootstrap < 0:
        raise ConfigError(f"must be >= 0, got {n_bootstrap}", field="n_bootstrap")
    if not 0 < confidence_level < 1:
        raise ConfigError(
            f"must be between 0 and 1, got {confidence_level}", field="confidence_level"
        )
    n, k = values.shape
    plan = split_half_plan(k, n_splits, seed=seed).astype(np.float64)
    half_a = (plan @ values.T) / plan.sum(axis=1, keepdims=True)  # (S, n)
    other = 1.0 - plan
    half_b = (other @ values.T) / other.sum(axis=1, keepdims=True)
    r = pearson_rows(half_a, half_b)
    stepped = _stepped_up(r)
    if np.isnan(stepped).all():
        raise DataError(
            "split-half reliability: every split has a constant half score over the units"
        )
    statistic = float(np.nanmean(stepped))
    low = high = float("nan")
    n_degenerate = 0
    if n_bootstrap:
        check_plan_size(n_bootstrap, (n * len(plan),))
        rows = one_sample_bootstrap(n, n_bootstrap, seed=seed)  # (B, n)
        # resamples in blocks of about BLOCK_VALUES values of (S, b, n), so the memory does not
        # grow with B (GEST's 3,565 samples × 3 splits × 5,000 resamples would be 2.4 GB)
        step = max(1, BLOCK_VALUES // (len(plan) * n))
        resampled = np.concatenate(
            [
                _stepped_up(pearson_rows(half_a[:, block], half_b[:, block]))  # (S, b)
                for block in (rows[i : i + step] for i in range(0, n_bootstrap, step))
            ],
            axis=1,
        )
        undefined = np.isnan(resampled).any(axis=0)
        n_degenerate = int(undefined.sum())
        means = resampled[:, ~undefined].mean(axis=0)
        if means.size:
            lo, hi = percentile_interval(means[None, :], confidence_level)
            low, high = float(lo[0]), float(hi[0])
    return SplitHalfResult(
        statistic=statistic,
        confidence_interval=(low, high),
        confidence_level=confidence_level,
        r_half=float(np.nanmean(r[np.isfinite(stepped)])),
        n_units=n,
        n_forms=k,
        n_splits=len(plan),
        exact=_is_exact(k, n_splits),
        n_bootstrap=n_bootstrap,
        n_degenerate=n_degenerate,
        seed=seed,
    )


#: The values (splits × resamples × units) of one block of the bootstrap.
BLOCK_VALUES = 1 << 21

def _stepped_up(r: np.ndarray) -> np.ndarray:
    """r_SB = max(2r / (1 + r), −1) of each split's r (module docstring: below −1); NaN where r
    is undefined."""
    with np.errstate(divide="ignore", invalid="ignore"):
        stepped = np.where(r > -1.0 / 3.0, 2.0 * r / (1.0 + r), -1.0)
    return np.where(np.isnan(r), np.nan, stepped)


def _is_exact(k: int, n_splits: int) -> bool:
    """Whether :func:`split_half_plan` enumerates every split of k forms for ``n_splits``."""
    half = k // 2
    return comb(k, half) // (2 if 2 * half == k else 1) <= n_splits
