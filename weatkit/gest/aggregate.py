"""GEST language-model metrics from per-sample scores (Pikuliak et al. 2023, arXiv:2311.18711).

Notation (paper v2 §4.2.1; v1 §4.2.1 eq. 3 for the score): for sample j with template t,

* score            s_j = log_b P(w_m | t(s_j)) − log_b P(w_f | t(s_j)),   b = 10 or e
* masculine rate   q_i = exp(mean_{j ∈ i} s_j)                           stereotype i = 1…16
* group rates      q_f = (Π_{i=1..7} q_i)^{1/7},  q_m = (Π_{i=8..16} q_i)^{1/9}
* stereotype rate  g_s = q_m / q_f
* feminine rank    position of stereotype i when the 16 q_i are sorted ascending (1 = most
  feminine; paper §4.1.3 and Figures 3, 5), ties get the average rank
* family check     q_fam = exp(mean s_j over the male-stereotype samples containing a family
  word), :func:`weatkit.gest.data.family_mask` (paper v2 §7.4, Table 3). The samples are
  pooled (the paper's "masculine rate for this group"): averaged over the 44 English MLM
  model × template pairs of the shipped predictions this gives q_m 1.14, q_f 1.00 and
  q_fam 0.98, Table 3's row

**Log base.** The paper defines q_i as the geometric mean of the ratios P(w_m)/P(w_f). That is
exp(mean s) only for natural-log scores (``log_base="e"``). The upstream code, whose numbers are
the published ones (paper Figures 4, 9, 10; ``gest/derived/reference_scores_from_predictions.csv``),
stores log10 scores and still aggregates with ``exp``: ``log_base="10"`` (the default) keeps that
convention, so q_i = exp(mean of log10 ratios) = (geometric mean of the ratios)^(1/ln 10) and
g_s = exp(mean_m − mean_f). The summary also gives ``g_s_geometric`` = b^(mean_m − mean_f) =
g_s^(ln b), the paper-literal ratio of geometric means for either base (the reference file's
``g_s_base10``; equal to ``g_s`` when b = e). Here mean_f, mean_m are the means over stereotypes
of the per-stereotype means of s, i.e. q_f and q_m are geometric means of the q_i (each stereotype
weighs the same), not of the samples: this reproduces the reference file to its 6 decimals.

**Bootstrap.** Percentile intervals (:func:`weatkit.stats.intervals.percentile_interval`) from
resamples that redraw the samples of each stereotype with replacement, separately per stereotype
(:func:`resample_indices`, scheme ``"stratified"`` of
:func:`weatkit.stats.resampling.bootstrap_draws`); q_f, q_m, g_s and q_fam are recomputed from
the same resamples. Unscored samples (NaN scores) are dropped before resampling.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd
from scipy.stats import rankdata

from weatkit.errors import WeatkitError
from weatkit.gest.data import (
    FEMALE_STEREOTYPES,
    MALE_STEREOTYPES,
    STEREOTYPES,
    family_mask,
    stereotype_frame,
)
from weatkit.stats.intervals import percentile_interval
from weatkit.stats.resampling import bootstrap_draws, counts_from_indices

LogBase = Literal["10", "e"]
LOG_BASES: tuple[str, ...] = ("10", "e")
DEFAULT_BOOTSTRAP = 5000
DEFAULT_SEED = 0
DEFAULT_CONFIDENCE_LEVEL = 0.95

_FEMALE = np.asarray(FEMALE_STEREOTYPES) - 1
_MALE = np.asarray(MALE_STEREOTYPES) - 1

STEREOTYPE_COLUMNS = [
    "stereotype",
    "name",
    "group",
    "n",
    "mean_score",
    "q",
    "q_ci_low",
    "q_ci_high",
    "rank",
]
_CI_VALUES = ("q_f", "q_m", "g_s", "g_s_geometric", "q_fam")
SUMMARY_COLUMNS = [
    "log_base",
    "n_samples",
    "n_skipped",
    *(f"{v}{suffix}" for v in _CI_VALUES for suffix in ("", "_ci_low", "_ci_high")),
    "n_fam",
    "n_bootstrap",
    "seed",
    "ci_level",
]


@dataclass(frozen=True)
class GestSummary:
    """The GEST metrics of one model × template.

    Attributes:
        stereotypes: one row per stereotype, :data:`STEREOTYPE_COLUMNS` (``n`` scored samples,
            ``mean_score`` = mean s, ``q`` = q_i with its bootstrap CI, feminine ``rank``).
        summary: one row, :data:`SUMMARY_COLUMNS` (q_f, q_m, g_s, g_s_geometric, q_fam with
            CIs; ``n_samples`` scored, ``n_skipped`` unscored; the bootstrap settings).
    """

    stereotypes: pd.DataFrame
    summary: pd.DataFrame

    @property
    def q_f(self) -> float:
        """Geometric mean of q_1…q_7."""
        return float(self.summary["q_f"].iloc[0])

    @property
    def q_m(self) -> float:
        """Geometric mean of q_8…q_16."""
        return float(self.summary["q_m"].iloc[0])

    @property
    def g_s(self) -> float:
        """Stereotype rate q_m / q_f."""
        return float(self.summary["g_s"].iloc[0])


def _check_log_base(log_base: str) -> str:
    if log_base not in LOG_BASES:
        raise WeatkitError(f"unknown log base {log_base!r}: choose 10 or e")
    return log_base


def group_means(mean_scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(mean_f, mean_m)``: means over stereotypes 1–7 and 8–16 of the per-stereotype mean
    scores (last axis of length 16), so that q_f = exp(mean_f) and q_m = exp(mean_m)."""
    m = np.asarray(mean_scores, dtype=np.float64)
    return m[..., _FEMALE].mean(axis=-1), m[..., _MALE].mean(axis=-1)


def feminine_ranks(rates: Sequence[float] | np.ndarray) -> np.ndarray:
    """Feminine rank of each stereotype: 1 for the lowest masculine rate (q_i or p_i), ties
    averaged (paper §4.1.3: "the j-th most feminine stereotype out of the 16")."""
    return rankdata(np.asarray(rates, dtype=np.float64), method="average")


def resample_indices(sizes: Sequence[int], n_resamples: int, seed: int) -> Iterator[np.ndarray]:
    """The bootstrap draws, one ``(n_resamples, n_i)`` array per stereotype in order.

    Row r of the i-th array lists the positions (within stereotype i's scored samples, in table
    order) drawn with replacement for resample r. All come from one
    ``numpy.random.default_rng(seed)``, stereotype after stereotype (scheme ``"stratified"`` of
    :func:`weatkit.stats.resampling.bootstrap_draws`), so the same sizes and seed always give
    the same resamples. A generator: only one stereotype's draws are in memory.
    """
    return bootstrap_draws(sizes, n_resamples, seed=seed, scheme="stratified")


def bootstrap_distribution(
    groups: Sequence[np.ndarray],
    indices: Iterable[np.ndarray],
    family: Sequence[np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Mean scores of every resample: ``(R, len(groups))``, and the family mean ``(R,)``.

    Each resample's means are a count matrix times the score vector (no loop over resamples):
    mean*_i = C_i s_i / n_i, with C_i the ``(R, n_i)`` multiplicities from ``indices``; the
    family mean pools the resampled family samples of all stereotypes, Σ_i C_i (s_i ∘ f_i) /
    Σ_i C_i f_i (NaN for a resample without family samples, or without ``family`` masks).
    """
    means, fam_sum, fam_n = [], 0.0, 0.0
    for i, (scores, drawn) in enumerate(zip(groups, indices, strict=True)):
        counts = counts_from_indices(drawn, len(scores))
        means.append(counts @ scores / len(scores))
        if family is not None:
            mask = family[i].astype(np.float64)
            fam_sum = fam_sum + counts @ (scores * mask)
            fam_n = fam_n + counts @ mask
    distribution = np.stack(means, axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        fam = np.asarray(fam_sum / fam_n) if family is not None else np.array(math.nan)
    return distribution, np.broadcast_to(fam, distribution.shape[:1]).astype(np.float64)


def _scored(scores: pd.DataFrame) -> tuple[pd.DataFrame, int]:
    """The rows with a finite score and the number of unscored (NaN) rows; checks the table."""
    for col in ("stereotype", "score"):
        if col not in scores.columns:
            raise WeatkitError(f"scores table has no {col!r} column")
    numeric = pd.to_numeric(scores["score"], errors="coerce")
    if (numeric.isna() & scores["score"].notna()).any():
        raise WeatkitError("scores table has non-numeric scores; leave unscored samples as NaN")
    values = numeric.to_numpy(dtype=np.float64)
    if np.isinf(values).any():
        raise WeatkitError("scores table has infinite scores; leave unscored samples as NaN")
    stereotypes = pd.to_numeric(scores["stereotype"], errors="coerce")
    if not stereotypes.isin(list(STEREOTYPES)).all():
        raise WeatkitError("scores table has stereotypes outside 1–16")
    keep = ~np.isnan(values)
    table = scores.loc[keep].copy()
    table["score"] = values[keep]
    table["stereotype"] = stereotypes[keep].astype(np.int64)
    missing = sorted(set(STEREOTYPES) - set(table["stereotype"]))
    if missing:
        raise WeatkitError(
            f"no scored samples for stereotype {missing[0]} ({STEREOTYPES[missing[0]]}); "
            "q_f, q_m and g_s need all 16"
        )
    return table, int((~keep).sum())


#: The largest x with a finite float64 exp(x).
_MAX_EXPONENT = math.log(np.finfo(np.float64).max)


def _check_exponents(
    table: pd.DataFrame, base: str, exponents: dict[str, np.ndarray], where: str = ""
) -> None:
    """Refuse scores whose rates would overflow: every rate is exp of a mean score (or of a
    difference of two, times ln b), so each exponent must be at most :data:`_MAX_EXPONENT`
    (≈ 709.78; a very negative one only underflows to 0). The error names the rate and the
    sample with the largest |score|. The exponents of ``q_i`` bound those of q_f and q_m (their
    means); that of g_s_geometric bounds g_s's (ln b ≥ 1).
    """
    for name, values in exponents.items():
        finite = np.asarray(values, dtype=np.float64)
        finite = finite[~np.isnan(finite)]
        if finite.size and finite.max() > _MAX_EXPONENT:
            worst = finite.max()
            row = table["score"].abs().idxmax()
            sample = table.loc[row, "sample_id"] if "sample_id" in table.columns else row
            log = "log10" if base == "10" else "ln"
            raise WeatkitError(
                f"scores too large: {name} = exp({worst:.4g}){where} is beyond the largest float "
                f"(exp({_MAX_EXPONENT:.2f})); the largest |score| is "
                f"{table.loc[row, 'score']:.4g} (sample {sample}); scores must be {log} ratios "
                f"{log} P(w_m) − {log} P(w_f)"
            )


def _interval(
    distribution: np.ndarray, confidence_level: float
) -> tuple[np.ndarray, np.ndarray]:
    """Percentile interval per column of ``(R, k)``; NaN when there are no resamples."""
    if distribution.shape[0] == 0:
        nan = np.full(distribution.shape[1:], np.nan)
        return nan, nan.copy()
    return percentile_interval(np.moveaxis(distribution, 0, -1), confidence_level)


def aggregate_scores(
    scores: pd.DataFrame,
    *,
    log_base: LogBase | str = "10",
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> GestSummary:
    """q_i, feminine ranks, q_f, q_m, g_s and q_fam with percentile bootstrap CIs.

    Args:
        scores: one row per sample with ``stereotype`` (1–16) and ``score`` (NaN = unscored,
            counted in ``n_skipped``); with a ``sentence`` column q_fam is computed too. E.g.
            from :func:`weatkit.gest.data.read_scores_csv`.
        log_base: ``"10"`` (scores are log10 ratios; upstream convention, q_i = exp(mean s)) or
            ``"e"`` (natural-log scores; q_i = exp(mean s) is then the paper's geometric mean).
            See the module docstring.
        n_bootstrap: resamples (0: no intervals).
        seed: seed of :func:`resample_indices`.
        confidence_level: confidence level of the intervals.

    Raises:
        WeatkitError: unknown log base, bad settings, infinite scores, a stereotype without
            scored samples.
    """
    base = _check_log_base(log_base)
    if n_bootstrap < 0:
        raise WeatkitError(f"the number of bootstrap resamples must be >= 0, not {n_bootstrap}")
    if not 0.0 < confidence_level < 1.0:
        raise WeatkitError(
            f"the confidence level must be between 0 and 1, not {confidence_level}"
        )
    table, n_skipped = _scored(scores)
    ids = list(STEREOTYPES)
    groups = [table.loc[table["stereotype"] == i, "score"].to_numpy() for i in ids]
    if "sentence" in table.columns:
        fam = family_mask(table["sentence"], table["stereotype"])
        families = [fam[(table["stereotype"] == i).to_numpy()] for i in ids]
        fam_scores = table["score"].to_numpy()[fam]
        fam_mean = fam_scores.mean() if fam_scores.size else math.nan
        _check_exponents(table, base, {"q_fam": np.array(fam_mean)})
        q_fam = math.exp(fam_mean)
        n_fam = int(fam.sum())
    else:
        families, q_fam, n_fam = None, math.nan, 0

    means = np.array([g.mean() for g in groups])
    mean_f, mean_m = group_means(means)
    ln_base = math.log(10.0) if base == "10" else 1.0
    _check_exponents(table, base, {"q_i": means, "g_s_geometric": ln_base * (mean_m - mean_f)})
    q = np.exp(means)
    values = {
        "q_f": math.exp(mean_f),
        "q_m": math.exp(mean_m),
        "g_s": math.exp(mean_m - mean_f),
        "g_s_geometric": math.exp(ln_base * (mean_m - mean_f)),
        "q_fam": q_fam,
    }

    draws = resample_indices([len(g) for g in groups], n_bootstrap, seed)
    boot, boot_fam = bootstrap_distribution(groups, draws, families)
    boot_f, boot_m = group_means(boot)
    _check_exponents(
        table,
        base,
        {"q_i": boot, "g_s_geometric": ln_base * (boot_m - boot_f), "q_fam": boot_fam},
        " in a bootstrap resample",
    )
    replicates = np.stack(
        [
            np.exp(boot_f),
            np.exp(boot_m),
            np.exp(boot_m - boot_f),
            np.exp(ln_base * (boot_m - boot_f)),
            np.exp(boot_fam),
        ],
        axis=1,
    )
    q_low, q_high = _interval(np.exp(boot), confidence_level)
    low, high = _interval(replicates, confidence_level)

    per = stereotype_frame()
    per["n"] = [len(g) for g in groups]
    per["mean_score"] = means
    per["q"], per["q_ci_low"], per["q_ci_high"] = q, q_low, q_high
    per["rank"] = feminine_ranks(q)

    row: dict[str, object] = {
        "log_base": base,
        "n_samples": len(table),
        "n_skipped": n_skipped,
    }
    for k, name in enumerate(_CI_VALUES):
        row[name], row[f"{name}_ci_low"], row[f"{name}_ci_high"] = values[name], low[k], high[k]
    row.update(n_fam=n_fam, n_bootstrap=n_bootstrap, seed=seed, ci_level=confidence_level)
    return GestSummary(
        stereotypes=per[STEREOTYPE_COLUMNS], summary=pd.DataFrame([row], columns=SUMMARY_COLUMNS)
    )


def aggregate_by_template(
    scores: pd.DataFrame,
    *,
    log_base: LogBase | str = "10",
    n_bootstrap: int = DEFAULT_BOOTSTRAP,
    seed: int = DEFAULT_SEED,
    confidence_level: float = DEFAULT_CONFIDENCE_LEVEL,
) -> GestSummary:
    """:func:`aggregate_scores` per template, when ``scores`` has a ``template`` column.

    Each template is aggregated on its own (templates in ascending order, each bootstrapped with
    the same ``seed``); both tables then get a leading ``template`` column. Without a
    ``template`` column this is :func:`aggregate_scores`.

    Example:
        >>> import pandas as pd
        >>> scores = pd.DataFrame({"template": [0] * 16 + [1] * 16,
        ...                        "stereotype": list(range(1, 17)) * 2, "score": [0.1] * 32})
        >>> result = aggregate_by_template(scores, n_bootstrap=0)
        >>> result.summary["template"].tolist(), result.summary["g_s"].round(3).tolist()
        ([0, 1], [1.0, 1.0])
    """

    def one(part: pd.DataFrame) -> GestSummary:
        return aggregate_scores(
            part,
            log_base=log_base,
            n_bootstrap=n_bootstrap,
            seed=seed,
            confidence_level=confidence_level,
        )

    if "template" not in scores.columns:
        return one(scores)
    parts = [(t, one(group)) for t, group in scores.groupby("template", sort=True)]
    if not parts:
        raise WeatkitError("scores table has no rows")

    def template_first(table: pd.DataFrame) -> pd.DataFrame:
        return table[["template", *(c for c in table.columns if c != "template")]]

    return GestSummary(
        stereotypes=template_first(
            pd.concat([r.stereotypes.assign(template=t) for t, r in parts], ignore_index=True)
        ),
        summary=template_first(
            pd.concat([r.summary.assign(template=t) for t, r in parts], ignore_index=True)
        ),
    )


def kendall_w(ranks: np.ndarray) -> float:
    """Kendall's coefficient of concordance of ``m`` raters ranking ``n`` items (Kendall &
    Babington Smith 1939), with the correction for ties::

        R_i = Σ_j r_ij,   S = Σ_i (R_i − mean R)²
        W = 12 S / (m² (n³ − n) − m Σ_j T_j),   T_j = Σ_groups (t³ − t) over rater j's ties

    ``ranks`` is ``(m, n)``, one row of ranks per rater (average ranks for ties). 1 = the raters
    agree completely, 0 = no agreement. NaN for fewer than 2 raters or items, or when every
    rater ties every item.
    """
    r = np.asarray(ranks, dtype=np.float64)
    if r.ndim != 2 or r.shape[0] < 2 or r.shape[1] < 2:
        return math.nan
    m, n = r.shape
    totals = r.sum(axis=0)
    s = float(((totals - totals.mean()) ** 2).sum())
    ties = 0.0
    for row in r:
        _, counts = np.unique(row, return_counts=True)
        ties += float((counts.astype(np.float64) ** 3 - counts).sum())
    denominator = m**2 * (n**3 - n) - m * ties
    return 12.0 * s / denominator if denominator > 0 else math.nan


TEMPLATE_SPREAD_COLUMNS = [
    "n_templates",
    "g_s_mean",
    "g_s_sd",
    "g_s_min",
    "g_s_max",
    "g_s_range",
    "kendall_w",
]


def template_spread(result: GestSummary) -> pd.DataFrame:
    """Between-template spread of a per-template GEST summary (Seshadri, Pezeshkpour & Singh
    2022, "Quantifying Social Biases Using Templates is Unreliable"): one row with the number
    of templates, the mean, sample SD (ddof 1), min, max and range of g_s over templates, and
    Kendall's W (:func:`kendall_w`) of the 16 stereotypes' ranks across the templates (the
    templates as raters). NaN where fewer than 2 templates."""
    summary, per = result.summary, result.stereotypes
    if "template" not in summary.columns:
        raise WeatkitError("the GEST summary has no template column: nothing to compare")
    g_s = summary.sort_values("template")["g_s"].to_numpy(dtype=np.float64)
    ranks = np.stack(
        [
            group.sort_values("stereotype")["rank"].to_numpy(dtype=np.float64)
            for _, group in per.groupby("template", sort=True)
        ]
    )
    k = len(g_s)
    row = {
        "n_templates": k,
        "g_s_mean": float(g_s.mean()),
        "g_s_sd": float(g_s.std(ddof=1)) if k > 1 else math.nan,
        "g_s_min": float(g_s.min()),
        "g_s_max": float(g_s.max()),
        "g_s_range": float(g_s.max() - g_s.min()),
        "kendall_w": kendall_w(ranks),
    }
    return pd.DataFrame([row], columns=TEMPLATE_SPREAD_COLUMNS)
