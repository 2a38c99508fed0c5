"""Convergent and discriminant validity: the multitrait–multimethod matrix (Campbell & Fiske 1959).

Each measure is one trait (a bias type: gender, race, ...) measured by one method (WEAT, GEST,
CrowS-Pairs, ...), scored on the same units (models, or model × language). The MTMM matrix holds
the correlation of every pair of measures across the units, and each pair is of one kind:

==============================  =================  ==========================================
kind                            trait, method      reads as
==============================  =================  ==========================================
``convergent``                  same, different    the validity diagonal: should be high
``heterotrait-monomethod``      different, same    discriminant: shared method variance
``heterotrait-heteromethod``    different, diff.   discriminant: should be lowest
``monotrait-monomethod``        same, same         two variants of one measure (a reliability)
==============================  =================  ==========================================

Every correlation is the existing machinery's (:func:`weatkit.stats.correlation.correlate_pair`:
Spearman's ρ by default, a percentile bootstrap interval over the units, a two-sided permutation
p exact up to 8 units, a flag for too few units) on the units where both measures are present.

**Verdicts** (Campbell & Fiske's criteria, on magnitudes |r|, since measures differ in which
side is stereotypical): a convergent correlation should be significant (:func:`weatkit.stats.
correlation.is_significant`: p ≤ α, the CI excludes 0, not flagged) and above every
discriminant (heterotrait) correlation in the rows and columns of its two measures; a
discriminant correlation should be below every convergent correlation of its two measures.
Each pair's ``verdict`` says so in words, e.g. ``convergent: ρ = 0.62 [0.21, 0.85], p = 0.010,
significant; above every discriminant correlation of its row and column (4; largest |ρ| =
0.40)`` (``(flagged)`` after ``significant`` when the ``flag`` column gives a reason not to read
the row as significant).

Reference: Campbell, D. T., & Fiske, D. W. (1959). Convergent and discriminant validation by the
multitrait-multimethod matrix. Psychological Bulletin 56(2), 81–105.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np
import pandas as pd

from weatkit.errors import ConfigError, DataError
from weatkit.stats.correlation import MIN_UNITS, STATISTICS, correlate_pair, is_significant

#: Columns of :attr:`MTMMResult.pairs` (and of ``weatkit compare``'s ``validity.csv``).
MTMM_COLUMNS = [
    "measure_x", "trait_x", "method_x", "measure_y", "trait_y", "method_y", "kind", "n",
    "statistic", "value", "ci_low", "ci_high", "p", "flag", "verdict",
]  # fmt: skip
KINDS = (
    "convergent",
    "heterotrait-monomethod",
    "heterotrait-heteromethod",
    "monotrait-monomethod",
)
_SYMBOLS = {"pearson": "r", "spearman": "ρ", "kendall": "τ_b"}


@dataclass(frozen=True)
class MTMMResult:
    """The multitrait–multimethod matrix and its pairs (module docstring).

    Attributes:
        matrix: the correlations, rows and columns ordered by method then trait, indexed by
            ``(method, trait, measure)``; the diagonal is NaN (no reliability is assumed).
        pairs: one row per pair of measures, :data:`MTMM_COLUMNS` (``value`` is the
            statistic, ``ci_low``/``ci_high`` its interval, ``p`` its permutation p).
        statistic: ``spearman``, ``kendall`` or ``pearson``.
        confidence_level: level of the intervals and of the significance in the verdicts.
    """

    matrix: pd.DataFrame
    pairs: pd.DataFrame
    statistic: str
    confidence_level: float

    @property
    def convergent(self) -> pd.DataFrame:
        """The pairs on the validity diagonal."""
        return self.pairs[self.pairs["kind"] == "convergent"].reset_index(drop=True)

    @property
    def verdicts(self) -> list[str]:
        """``MEASURE_X ~ MEASURE_Y: verdict`` per pair."""
        return [f"{r.measure_x} ~ {r.measure_y}: {r.verdict}" for r in self.pairs.itertuples()]


def pair_kind(trait_x: str, method_x: str, trait_y: str, method_y: str) -> str:
    """The kind of a pair of measures (:data:`KINDS`)."""
    if trait_x == trait_y:
        return "monotrait-monomethod" if method_x == method_y else "convergent"
    return "heterotrait-monomethod" if method_x == method_y else "heterotrait-heteromethod"


def mtmm_shortfall(measures: Mapping[str, tuple[str, str]]) -> str | None:
    """Why ``measures`` (column -> (trait, method)) give no MTMM matrix, or None: it needs a
    trait measured by 2 methods (a convergent pair) and 2 traits (discriminant pairs)."""
    traits = {trait for trait, _ in measures.values()}
    methods_of = {t: {m for tt, m in measures.values() if tt == t} for t in traits}
    if not any(len(m) > 1 for m in methods_of.values()):
        return (
            f"no trait is measured by 2 methods ({len(measures)} measure(s) of "
            f"{len(traits)} trait(s)): no convergent correlation"
        )
    if len(traits) < 2:
        return "one trait only: no discriminant correlation"
    return None


def mtmm(
    scores: pd.DataFrame,
    measures: Mapping[str, tuple[str, str]],
    *,
    statistic: str = "spearman",
    n_bootstrap: int = 2000,
    seed: int = 0,
    confidence_level: float = 0.95,
) -> MTMMResult:
    """The multitrait–multimethod matrix of ``measures`` over the units of ``scores``.

    Args:
        scores: one row per unit, one column per measure (NaN where a unit lacks it).
        measures: column -> ``(trait, method)``, e.g. ``{"gest:g_s": ("gender", "gest")}``.
        statistic: ``spearman`` (default), ``kendall`` or ``pearson``.
        n_bootstrap: bootstrap resamples of the units for the intervals (0: none).
        seed: seed of the resamples and of the Monte Carlo permutations.
        confidence_level: level of the intervals and of the verdicts' significance.

    Raises:
        DataError: a measure that is not a column, or measures that give no MTMM
            (:func:`mtmm_shortfall`).
        ConfigError: an unknown statistic, a bad level or resample count.
    """
    if statistic not in STATISTICS:
        raise ConfigError(f"choose {', '.join(STATISTICS)}, not {statistic!r}", field="statistic")
    if n_bootstrap < 0:
        raise ConfigError(f"must be >= 0, got {n_bootstrap}", field="n_bootstrap")
    if not 0 < confidence_level < 1:
        raise ConfigError(
            f"must be between 0 and 1, got {confidence_level}", field="confidence_level"
        )
    missing = [m for m in measures if m not in scores.columns]
    if missing:
        raise DataError(f"the MTMM matrix: no column {missing[0]!r} in the scores")
    why = mtmm_shortfall(measures)
    if why is not None:
        raise DataError(f"the MTMM matrix: {why}")
    order = sorted(measures, key=lambda m: (measures[m][1], measures[m][0]))
    rows = []
    for mx, my in combinations(order, 2):
        (tx, methx), (ty, methy) = measures[mx], measures[my]
        both = scores[[mx, my]].apply(pd.to_numeric, errors="coerce").dropna()
        row = {
            "measure_x": mx, "trait_x": tx, "method_x": methx,
            "measure_y": my, "trait_y": ty, "method_y": methy,
            "kind": pair_kind(tx, methx, ty, methy), "n": len(both), "statistic": statistic,
        }  # fmt: skip
        x, y = both[mx].to_numpy(float), both[my].to_numpy(float)
        if len(both) < MIN_UNITS or np.ptp(x) == 0 or np.ptp(y) == 0:
            why_not = f"n={len(both)} < {MIN_UNITS}" if len(both) < MIN_UNITS else "a constant"
            nan = float("nan")
            row |= {"value": nan, "ci_low": nan, "ci_high": nan, "p": nan,
                    "flag": f"{why_not}: no correlation"}  # fmt: skip
        else:
            values = correlate_pair(
                x, y, n_bootstrap=n_bootstrap, seed=seed, confidence_level=confidence_level,
                statistics=(statistic,),
            )  # fmt: skip
            row |= {
                "value": values[statistic],
                "ci_low": values[f"{statistic}_ci_low"],
                "ci_high": values[f"{statistic}_ci_high"],
                "p": values[f"{statistic}_p"],
                "flag": values["flag"],
            }
        rows.append(row)
    pairs = pd.DataFrame(rows, columns=MTMM_COLUMNS[:-1])
    pairs["verdict"] = _verdicts(pairs, confidence_level)
    return MTMMResult(
        matrix=_matrix(pairs, order, measures),
        pairs=pairs[MTMM_COLUMNS],
        statistic=statistic,
        confidence_level=confidence_level,
    )


def _matrix(
    pairs: pd.DataFrame, order: list[str], measures: Mapping[str, tuple[str, str]]
) -> pd.DataFrame:
    index = pd.MultiIndex.from_tuples(
        [(measures[m][1], measures[m][0], m) for m in order], names=["method", "trait", "measure"]
    )
    values = np.full((len(order), len(order)), np.nan)
    where = {m: i for i, m in enumerate(order)}
    for r in pairs.itertuples():
        i, j = where[r.measure_x], where[r.measure_y]
        values[i, j] = values[j, i] = r.value
    return pd.DataFrame(values, index=index, columns=index)


def _verdicts(pairs: pd.DataFrame, confidence_level: float) -> list[str]:
    """The plain-language verdict of every pair (module docstring)."""
    out = []
    for r in pairs.itertuples():
        symbol = _SYMBOLS[r.statistic]
        if not np.isfinite(r.value):
            out.append(f"{r.kind}: {r.flag}")
            continue
        ci = "" if np.isnan(r.ci_low) else f" [{r.ci_low:.2f}, {r.ci_high:.2f}]"
        head = f"{r.kind}: {symbol} = {r.value:.2f}{ci}, p = {r.p:.3f}"
        touching = (
            (pairs["measure_x"] == r.measure_x)
            | (pairs["measure_y"] == r.measure_x)
            | (pairs["measure_x"] == r.measure_y)
            | (pairs["measure_y"] == r.measure_y)
        )
        others = pairs[touching & (pairs.index != r.Index) & np.isfinite(pairs["value"])]
        size = abs(r.value)
        if r.kind == "convergent":
            significant = is_significant(r.p, r.flag, confidence_level, (r.ci_low, r.ci_high))
            head += ", significant" if significant else ", not significant"
            head += " (flagged)" if isinstance(r.flag, str) and r.flag else ""
            rivals = others[others["trait_x"] != others["trait_y"]]
            out.append(f"{head}; {_against(size, rivals, symbol, 'discriminant', above=True)}")
        elif r.kind.startswith("heterotrait"):
            rivals = others[others["kind"] == "convergent"]
            out.append(f"{head}; {_against(size, rivals, symbol, 'convergent', above=False)}")
        else:
            out.append(f"{head}; same trait and method: a reliability, not validity")
    return out


def _against(size: float, rivals: pd.DataFrame, symbol: str, what: str, *, above: bool) -> str:
    """How |value| compares with the |values| of ``rivals`` (the other kind in the rows and
    columns of the pair's two measures)."""
    where = "of its row and column"
    if rivals.empty:
        return f"no {what} correlation in its row and column"
    magnitudes = rivals["value"].abs().to_numpy()
    if above:
        worse = int((magnitudes >= size).sum())
        largest = f"largest |{symbol}| = {magnitudes.max():.2f}"
        if worse == 0:
            return f"above every {what} correlation {where} ({len(rivals)}; {largest})"
        return f"not above {worse} of {len(rivals)} {what} correlations {where} ({largest})"
    worse = int((magnitudes <= size).sum())
    smallest = f"smallest |{symbol}| = {magnitudes.min():.2f}"
    if worse == 0:
        return f"below every {what} correlation {where} ({len(rivals)}; {smallest})"
    return f"not below {worse} of {len(rivals)} {what} correlations {where} ({smallest})"
