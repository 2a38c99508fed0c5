"""CA-WEAT aggregation over the lists of one language: the median and its order-statistic CI.

CA-WEAT paper §5: "For the average version, we provide the median and 95% confidence intervals
(CI) using order statistics given that the distributions are non-normal and contain few elements."

Distribution-free CI for the median (e.g. Conover 1999, §3.2): with the values sorted,
x_(1) ≤ … ≤ x_(n), and K ~ Binomial(n, 1/2), the interval [x_(j), x_(n−j+1)] covers the median
with probability 1 − 2 P(K ≤ j − 1). We take the largest j whose coverage is at least the
requested confidence level. With fewer than 6 lists even [min, max] covers less than 95%
(1 − 2·0.5ⁿ: 93.75% for n = 5, 50% for n = 2, 0% for n = 1); the interval is then [min, max]
and ``confidence_level`` reports its actual coverage, so a table never claims more than it has.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

try:  # scipy.stats.binom.cdf's own function (Boost's), without importing scipy.stats (slow)
    from scipy.special._ufuncs import _binom_cdf
except ImportError:  # pragma: no cover - an older SciPy keeps it in scipy.stats (_boost)
    from scipy.stats import binom

    _binom_cdf = binom.cdf

from weatkit.errors import WeatkitError


@dataclass(frozen=True)
class MedianCI:
    """Median of ``n`` values and the order-statistic interval [x_(rank_low), x_(rank_high)].

    ``confidence_level`` is the interval's exact coverage (≥ the requested level when ``n``
    allows it). ``statistic`` and ``confidence_interval`` name them as ``scipy.stats`` does.
    """

    median: float
    low: float
    high: float
    confidence_level: float
    rank_low: int
    rank_high: int
    n: int

    @property
    def statistic(self) -> float:
        """The median."""
        return self.median

    @property
    def confidence_interval(self) -> tuple[float, float]:
        """``(low, high)``."""
        return (self.low, self.high)


def median_ci(values: Sequence[float] | np.ndarray, confidence_level: float = 0.95) -> MedianCI:
    """The median and its distribution-free CI from binomial ranks (NaN values are ignored)."""
    x = np.sort(np.asarray(values, dtype=float))
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        raise WeatkitError("cannot take the median of zero values")
    j = 1
    for candidate in range(1, n // 2 + 1):
        if 1.0 - 2.0 * _binom_cdf(candidate - 1, n, 0.5) >= confidence_level:
            j = candidate
        else:
            break
    coverage = max(0.0, 1.0 - 2.0 * float(_binom_cdf(j - 1, n, 0.5)))
    return MedianCI(
        median=float(np.median(x)),
        low=float(x[j - 1]),
        high=float(x[n - j]),
        confidence_level=coverage,
        rank_low=j,
        rank_high=n - j + 1,
        n=n,
    )
