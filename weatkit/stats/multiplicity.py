"""Multiplicity control: p-values adjusted over a family of tests (Holm; Benjamini–Hochberg).

With the m defined p-values of a family sorted, p_(1) ≤ … ≤ p_(m):

* Holm (1979) step-down, controlling the family-wise error rate:
  p̃_(i) = min(1, max_{j ≤ i} (m − j + 1) p_(j));
* Benjamini & Hochberg (1995) step-up, controlling the false discovery rate (the q-value):
  q_(i) = min(1, min_{j ≥ i} m p_(j) / j).

Both are computed as ``statsmodels.stats.multitest.multipletests`` computes them (methods
``"holm"`` and ``"fdr_bh"``), the same floating-point operations in the same order, so the
values are bit for bit statsmodels' (``tests/test_stats_multiplicity.py`` checks it); importing
statsmodels (and with it ``scipy.stats``) would take longer than a run's tables. A missing
p-value (NaN: no permutation test) is not a member of the family and gets NaN; m counts only
the defined ones.

Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist.
6:65–70. Benjamini, Y. & Hochberg, Y. (1995). Controlling the false discovery rate. J. R.
Statist. Soc. B 57:289–300.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import numpy as np

from weatkit.errors import WeatkitError

Adjustment = Literal["holm", "fdr_bh"]
#: The adjusted columns of a results table and the method of each.
ADJUSTED_COLUMNS: dict[str, Adjustment] = {"p_holm": "holm", "q_bh": "fdr_bh"}


def adjust_pvalues(pvalues: Sequence[float] | np.ndarray, method: Adjustment) -> np.ndarray:
    """The p-values adjusted over the family of all defined ones (module docstring).

    Args:
        pvalues: one p-value per test; NaN where a test has none.
        method: ``"holm"`` (Holm 1979) or ``"fdr_bh"`` (Benjamini & Hochberg 1995).

    Returns:
        The adjusted values in the input's order, NaN where the input is NaN.

    Raises:
        WeatkitError: an unknown method or a defined p-value outside [0, 1].

    Example:
        >>> adjust_pvalues([0.01, float("nan"), 0.04, 0.03], "holm").round(3).tolist()
        [0.03, nan, 0.06, 0.06]
    """
    if method not in ADJUSTED_COLUMNS.values():
        raise WeatkitError(f"unknown p-value adjustment {method!r}: choose holm or fdr_bh")
    p = np.asarray(pvalues, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    defined = ~np.isnan(p)
    if not defined.any():
        return out
    if np.any((p[defined] < 0) | (p[defined] > 1)):
        raise WeatkitError("p-values must lie between 0 and 1 to be adjusted")
    out[defined] = _adjusted(p[defined], method)
    return out


def _adjusted(p: np.ndarray, method: Adjustment) -> np.ndarray:
    """``multipletests(p, method=method)[1]`` for defined ``p``: sort, Holm's running max of
    (m − i + 1) p_(i) or BH's running min (from the top) of p_(i) / (i / m), cap at 1."""
    order = np.argsort(p)
    ranked = np.take(p, order)
    m = len(ranked)
    if method == "holm":
        adjusted = np.maximum.accumulate(ranked * np.arange(m, 0, -1))
    else:
        adjusted = np.minimum.accumulate((ranked / (np.arange(1, m + 1) / float(m)))[::-1])[::-1]
    adjusted[adjusted > 1] = 1
    out = np.empty_like(adjusted)
    out[order] = adjusted
    return out
