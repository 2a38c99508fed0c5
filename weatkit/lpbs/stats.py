"""The LPBS test over two attribute sets: statistic, effect size, permutation p, bootstrap CIs.

From the word rows of :func:`weatkit.lpbs.score.score_words`, for a target group G (its words
w), attribute a and template t, the increased log-probability score (Kurita et al. 2019, §3; a
group's probability is the sum of its words', as the reference ``bias_score`` does, so a group
of one word is the paper's score):

    s(G, a, t) = log Σ_{w∈G} p_tgt(w, a, t) − log Σ_{w∈G} p_prior(w, t)

and the log-probability bias score of a, t for the groups G₁, G₂:

    b(a, t) = s(G₁, a, t) − s(G₂, a, t)

The units of the test (``unit``): ``attribute`` (the paper, §4: "the mean log probability
bias score for each attribute", permuting the attributes) u_a = mean_t b(a, t), one per
attribute word; ``sentence`` (the reference notebook: every (template, attribute) row a unit)
u = b(a, t). Over the units U_A of attribute set A and U_B of B:

    S = mean(U_A) − mean(U_B),        d = S / std(U_A ∪ U_B)   (ddof 1, pandas' std)

p: the permutation test of S over the re-splits of U_A ∪ U_B into sizes |U_A|, |U_B| (all of
them when there are at most ``max_exact``, else ``n_permutations`` random distinct ones with
p = (k + 1)/(B + 1)), :func:`weatkit.stats.resampling.permutation_plan` with sizes
``(0, 0, |U_A|, |U_B|)``. Intervals: percentile bootstrap of S and d, U_A and U_B resampled
independently (:func:`weatkit.stats.resampling.bootstrap_draws`, scheme ``weat``: the plan
depends only on the seed and the sizes).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from weatkit.association._common import chunks, interval
from weatkit.errors import WeatkitError
from weatkit.stats.resampling import bootstrap_draws, permutation_plan, pvalue_from_counts

UNITS = ("attribute", "sentence")
ALTERNATIVES = ("two-sided", "greater", "less")
#: The columns of :func:`bias_scores`.
BIAS_COLUMNS = ["template", "attribute", "set", "s_1", "s_2", "bias"]


def group_scores(words: pd.DataFrame) -> pd.DataFrame:
    """s(G, a, t) per (template, attribute, group): columns ``template, attribute, group, s``
    (in the order first met)."""
    keys = ["template", "attribute", "group"]
    grouped = words.groupby(keys, sort=False)
    target = grouped["log_p_target"].apply(lambda v: logsumexp(v.to_numpy(np.float64)))
    prior = grouped["log_p_prior"].apply(lambda v: logsumexp(v.to_numpy(np.float64)))
    return (target - prior).rename("s").reset_index()


def bias_scores(
    words: pd.DataFrame, groups: tuple[str, str], sets: dict[str, Sequence[str]]
) -> pd.DataFrame:
    """b(a, t) per (template, attribute) of each attribute set: :data:`BIAS_COLUMNS`, ``s_1``
    and ``s_2`` the scores of ``groups[0]`` and ``groups[1]``; sets in the order given, then
    templates, then attributes in their set's order."""
    s = group_scores(words).set_index(["template", "attribute", "group"])["s"]
    templates = list(dict.fromkeys(words["template"]))
    rows = []
    for name, attributes in sets.items():
        for t in templates:
            for a in attributes:
                s1, s2 = float(s[(t, a, groups[0])]), float(s[(t, a, groups[1])])
                rows.append((t, a, name, s1, s2, s1 - s2))
    return pd.DataFrame(rows, columns=BIAS_COLUMNS)


def units(bias: pd.DataFrame, set_name: str, unit: str) -> np.ndarray:
    """The test's units of one attribute set: per attribute the mean of b over the templates
    (``attribute``), or every (template, attribute) row (``sentence``)."""
    if unit not in UNITS:
        raise WeatkitError(f"unknown unit {unit!r}: choose {', '.join(UNITS)}")
    rows = bias[bias["set"] == set_name]
    if unit == "sentence":
        return rows["bias"].to_numpy(np.float64)
    return rows.groupby("attribute", sort=False)["bias"].mean().to_numpy(np.float64)


@dataclass(frozen=True)
class LpbsStatistics:
    """S, d, their intervals and the permutation p of one test (module docstring)."""

    statistic: float
    effect_size: float
    pvalue: float | None
    statistic_ci: tuple[float, float] | None
    effect_size_ci: tuple[float, float] | None
    permutation_method: str | None
    n_permutations: int


def _effect(a: np.ndarray, b: np.ndarray, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    s = a.mean(axis=axis) - b.mean(axis=axis)
    sd = np.concatenate([a, b], axis=axis).std(axis=axis, ddof=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return s, np.where(sd > 0, s / np.where(sd > 0, sd, 1.0), np.nan)


def lpbs_statistics(
    a: np.ndarray,
    b: np.ndarray,
    *,
    n_bootstrap: int = 5000,
    n_permutations: int = 10000,
    max_exact: int = 1_000_000,
    alternative: str = "two-sided",
    seed: int = 0,
    confidence_level: float = 0.95,
) -> LpbsStatistics:
    """The test on the units ``a`` (of set A) and ``b`` (of set B); 0 resamples switch the
    interval or the p-value off.

    Example:
        >>> r = lpbs_statistics(np.array([1.0, 2.0]), np.array([0.0, -1.0]), n_bootstrap=0)
        >>> round(r.statistic, 3), round(r.effect_size, 3), round(r.pvalue, 3)
        (2.0, 1.549, 0.333)
    """
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if len(a) < 2 or len(b) < 2:
        raise WeatkitError(
            f"LPBS needs at least 2 units per attribute set, got {len(a)} and {len(b)}"
        )
    if alternative not in ALTERNATIVES:
        raise WeatkitError(f"unknown alternative {alternative!r}: choose {', '.join(ALTERNATIVES)}")
    s, d = (float(v) for v in _effect(a, b))
    statistic_ci = effect_size_ci = None
    if n_bootstrap:
        ia, ib = bootstrap_draws([len(a), len(b)], n_bootstrap, seed=seed, scheme="weat")
        boot_s, boot_d = _effect(a[ia], b[ib], axis=1)
        statistic_ci = interval(boot_s, confidence_level)[0]
        effect_size_ci = interval(boot_d, confidence_level)[0]
    pvalue, method, n_splits = None, None, 0
    if n_permutations:
        plan = permutation_plan(
            len(a), len(b), n_permutations, max_exact, seed, (0, 0, len(a), len(b))
        )
        z = np.concatenate([a, b])
        observed = a.sum()  # S increases with the sum over the A side
        tol = 1e-9 * max(abs(observed), 1.0)
        ge = le = 0
        for part in chunks(plan.n, len(z)):
            sums = plan.membership[part] @ z
            ge += int((sums >= observed - tol).sum())
            le += int((sums <= observed + tol).sum())
        pvalue = float(
            pvalue_from_counts(np.array(ge), np.array(le), plan.n, plan.exact, alternative)
        )
        method, n_splits = ("exact" if plan.exact else "monte-carlo"), plan.n
    return LpbsStatistics(s, d, pvalue, statistic_ci, effect_size_ci, method, n_splits)


def row_influence(bias: pd.DataFrame, sets: tuple[str, str], unit: str) -> np.ndarray:
    """Leave-one-out influence of each (template, attribute) row of ``bias`` on S, as
    :mod:`weatkit.items.influence`: ``S without the row − S`` (the row's attribute then has
    one template fewer with ``unit="attribute"``); NaN where a set would keep fewer than one
    unit."""
    observed = _statistic(bias, sets, unit)
    out = np.full(len(bias), np.nan)
    for i in range(len(bias)):
        rest = bias.drop(index=bias.index[i])
        with np.errstate(invalid="ignore"):
            out[i] = _statistic(rest, sets, unit) - observed
    return out


def _statistic(bias: pd.DataFrame, sets: tuple[str, str], unit: str) -> float:
    a, b = units(bias, sets[0], unit), units(bias, sets[1], unit)
    if len(a) == 0 or len(b) == 0:
        return float("nan")
    return float(a.mean() - b.mean())
