"""The one screen format of numbers: estimates with their intervals, p-values, plain values.

Every terminal table (``weatkit run``, ``compare``, ``crows``, ``gest``, ``stereoset``,
``mbe``) and the HTML report show an estimate with its interval through
:func:`format_estimate`: fixed-point, ``decimals`` decimals or more where fewer would make the
digits contradict what the flags say. With ``r(x)`` the number as printed (rounded to ``k``
decimals and read back), ``k`` is the smallest ≥ ``decimals`` such that, for the neutral value
``n``,

* ``r(low) > n`` ⇔ ``low > n`` and ``r(high) < n`` ⇔ ``high < n``: the printed interval
  excludes ``n`` exactly when the interval does (``gest:g_s 1.00015 [1.00002, 1.00029]*``,
  never ``1.000 [1.000, 1.000]*``);
* ``r(low) < r(high)`` when ``low < high``: an interval that is not one point is never printed
  as one (the degenerate-interval flag of :func:`weatkit.stats.correlation.degenerate_interval`
  means what it shows).

Rounding is to nearest and monotone, so ``low ≤ estimate ≤ high`` holds in the digits whenever
it holds in the values. p-values have their own format, :func:`format_p`.
"""

from __future__ import annotations

import math

import pandas as pd

#: Below this a p-value is shown as ``< 1e-4``: with 4 decimals it would print as 0.0000 (a
#: permutation or exact p is never 0).
P_FLOOR = 1e-4
#: What a cell shows for a missing number.
MISSING = "–"
#: More decimals than this never change a double's value (its exact decimal expansion ends by
#: 1074 digits after the point); the search of :func:`estimate_decimals` stops there.
_MAX_DECIMALS = 1100


def format_p(value: object) -> str:
    """The one format of a p-value: 4 decimals, ``< 1e-4`` below 10⁻⁴; empty when missing
    (NaN, None)."""
    if value is None or pd.isna(value):  # type: ignore[arg-type]
        return ""
    p = float(value)  # type: ignore[arg-type]
    return "< 1e-4" if p < P_FLOOR else f"{p:.4f}"


def _missing(value: object) -> bool:
    return value is None or bool(pd.isna(value))  # type: ignore[arg-type]


def _printed(value: float, decimals: int) -> float:
    return float(f"{value:.{decimals}f}")


def estimate_decimals(
    estimate: float,
    low: float = math.nan,
    high: float = math.nan,
    *,
    neutral: float | None = None,
    decimals: int = 3,
) -> int:
    """The decimals :func:`format_estimate` prints: the smallest ``k ≥ decimals`` for which the
    printed interval is on the same side of ``neutral`` as the interval, and not one point
    unless it is one (module docstring). Without an interval, ``decimals``."""
    del estimate  # monotone rounding keeps it inside the printed interval
    if _missing(low) or _missing(high) or not (math.isfinite(low) and math.isfinite(high)):
        return decimals
    n = None if _missing(neutral) else float(neutral)  # type: ignore[arg-type]
    for k in range(decimals, _MAX_DECIMALS):
        lo, hi = _printed(low, k), _printed(high, k)
        if (lo < hi) != (low < high):
            continue
        if n is not None and ((lo > n) != (low > n) or (hi < n) != (high < n)):
            continue
        return k
    return _MAX_DECIMALS


def format_number(value: object, decimals: int = 3) -> str:
    """``value`` in fixed point with ``decimals`` decimals; :data:`MISSING` when missing."""
    if _missing(value):
        return MISSING
    return f"{float(value):.{decimals}f}"  # type: ignore[arg-type]


def format_estimate(
    estimate: float,
    low: float = math.nan,
    high: float = math.nan,
    *,
    neutral: float | None = None,
    decimals: int = 3,
) -> str:
    """``estimate [low, high]`` with :func:`estimate_decimals` decimals (``1.00015 [1.00002,
    1.00029]`` around neutral 1 at 3 decimals), or the estimate alone without an interval; a
    missing number is :data:`MISSING`."""
    k = estimate_decimals(estimate, low, high, neutral=neutral, decimals=decimals)
    text = format_number(estimate, k)
    if _missing(low) and _missing(high):
        return text
    return f"{text} [{format_number(low, k)}, {format_number(high, k)}]"
