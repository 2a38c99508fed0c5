"""Uncertainty of the sentence-level scores of ``weatkit compare``: bootstrap CIs over the items
and tests of the neutral value (issue 19, item 7).

Every interval is a percentile bootstrap (:func:`weatkit.stats.intervals.percentile_interval`)
whose resamples come from :mod:`weatkit.stats.resampling` (scheme ``"stratified"``: one
``numpy.random.default_rng(seed)``, strata one after another, so a plan depends only on the
seed and the stratum sizes), with the resamples, seed and level of the comparison file's
``scores`` section (:class:`weatkit.crossmethod.config.ScoreOptions`; default 1,000, 0, 0.95;
0 resamples: no intervals):

=====================  =================================  ====================================
measure                items resampled                    neutral test
=====================  =================================  ====================================
``gest:g_s``           GEST samples, within stereotype    CI excludes g_s = 1?
                       (the plan of ``weatkit gest``; the
                       same plan for every template; the
                       replicate is the template mean)
``eurogest:g_s``       EuroGEST items, within stereotype  CI excludes g_s = 1?
                       (the plan and interval of
                       ``weatkit gest --lang``)
``stereoset:*_term``   examples, within target term       SS: exact binomial of Σ pro of N
                       (every term keeps its N_t)         examples against 1/2; LMS, ICAT: none
``crows:*``            pairs (``weatkit crows``' CI)      exact binomial of #wins of N pairs
``mbe:*``              male and female sentences          exact binomial of #(A(m) > A(f)) of
                       (two strata)                       the n_m·n_f pairs against 1/2
=====================  =================================  ====================================

The binomial test (``scipy.stats.binomtest(k, n, 0.5)``, two-sided; Clopper & Pearson's exact
test) asks whether the share of items where the stereotypical option wins differs from 1/2.
Ties count as losses, as in the scores themselves (CrowS-Pairs' neutral pairs, StereoSet's
``pro = [s_stereo > s_anti]``). For MBE the n_m·n_f pairs share sentences, so they are not
independent and the binomial p is too small when the pairs are many (as for the MBE paper's
McNemar test); the bootstrap CI over sentences is the honest interval there.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import binomtest

from weatkit.gest.aggregate import bootstrap_distribution, group_means, resample_indices
from weatkit.gest.data import STEREOTYPES
from weatkit.stats.intervals import percentile_interval
from weatkit.stats.resampling import bootstrap_draws, counts_from_indices
from weatkit.stereoset.metrics import icat_score


def binomial_p(k: int, n: int) -> float:
    """Exact two-sided binomial p of ``k`` wins in ``n`` items against 1/2
    (``scipy.stats.binomtest``); NaN when ``n`` is 0."""
    if n <= 0:
        return math.nan
    return float(binomtest(int(k), int(n), 0.5).pvalue)


def _interval(replicates: np.ndarray, confidence_level: float) -> tuple[float, float]:
    if replicates.size == 0:
        return math.nan, math.nan
    low, high = percentile_interval(replicates[None, :], confidence_level)
    return float(low[0]), float(high[0])


def gest_template_mean_interval(
    scores: pd.DataFrame,
    *,
    n_bootstrap: int,
    seed: int,
    confidence_level: float,
) -> tuple[float, float, float]:
    """``(g_s, ci_low, ci_high)`` of the mean over templates of g_s.

    For template t, resample r redraws the scored samples of each stereotype with replacement
    (:func:`weatkit.gest.aggregate.resample_indices`, the plan of ``weatkit gest``, with the same
    seed for every template); mean*_i = the resampled mean score of stereotype i, and::

        g_s*_t = exp(mean_{i=8..16} mean*_i − mean_{i=1..7} mean*_i)
        replicate r = (1/T) Σ_t g_s*_t

    The plan depends only on the seed and the stereotypes' sizes, so templates that scored the
    same samples draw the same samples in every resample (paired over templates). With one
    template the interval is ``weatkit gest``'s g_s interval. Unscored (NaN) samples are left
    out, as there.
    """
    parts = (
        [group for _, group in scores.groupby("template", sort=True)]
        if "template" in scores.columns
        else [scores]
    )
    values, replicates = [], []
    for part in parts:
        score = pd.to_numeric(part["score"], errors="coerce").to_numpy(np.float64)
        stereotype = pd.to_numeric(part["stereotype"], errors="coerce").to_numpy()
        keep = ~np.isnan(score)
        groups = [score[keep & (stereotype == i)] for i in STEREOTYPES]
        mean_f, mean_m = group_means(np.array([g.mean() for g in groups]))
        values.append(math.exp(mean_m - mean_f))
        draws = resample_indices([len(g) for g in groups], n_bootstrap, seed)
        boot, _ = bootstrap_distribution(groups, draws)
        boot_f, boot_m = group_means(boot)
        replicates.append(np.exp(boot_m - boot_f))
    low, high = _interval(np.mean(replicates, axis=0), confidence_level)
    return float(np.mean(values)), low, high


def stereoset_term_intervals(
    outcomes: pd.DataFrame,
    *,
    n_bootstrap: int,
    seed: int,
    confidence_level: float,
) -> dict[str, tuple[float, float]]:
    """Percentile CIs of ``ss_term``, ``lms_term`` and ``icat_term`` over the examples.

    ``outcomes``: one row per example with ``term``, ``pro`` (0/1) and ``related`` (0–2), e.g.
    :func:`weatkit.stereoset.metrics.outcomes` of one split. The examples of each target term t
    (in order of first appearance) are one stratum, redrawn with replacement
    (:func:`weatkit.stats.resampling.bootstrap_draws`, scheme ``"stratified"``); with C_t the
    ``(R, N_t)`` multiplicities::

        SS*_t  = 100 · C_t pro_t / N_t,      LMS*_t = 100 · C_t related_t / (2 N_t)
        ss*    = mean_t SS*_t,  lms* = mean_t LMS*_t,  icat* = lms* · min(ss*, 100 − ss*) / 50

    (StereoSet's per-term convention, :mod:`weatkit.stereoset.metrics`). Returns
    ``{"ss_term": (low, high), "lms_term": ..., "icat_term": ...}``.
    """
    terms = list(dict.fromkeys(outcomes["term"]))
    members = [(outcomes["term"] == t).to_numpy() for t in terms]
    pro = outcomes["pro"].to_numpy(np.float64)
    related = outcomes["related"].to_numpy(np.float64)
    ss = np.zeros(n_bootstrap)
    lms = np.zeros(n_bootstrap)
    sizes = [int(m.sum()) for m in members]
    draws = bootstrap_draws(sizes, n_bootstrap, seed=seed, scheme="stratified")
    for member, n, drawn in zip(members, sizes, draws, strict=True):
        counts = counts_from_indices(drawn, n)
        ss += 100.0 * (counts @ pro[member]) / n
        lms += 100.0 * (counts @ related[member]) / (2.0 * n)
    ss /= len(terms)
    lms /= len(terms)
    icat = icat_score(lms, ss)
    return {
        name: _interval(values, confidence_level)
        for name, values in (("ss_term", ss), ("lms_term", lms), ("icat_term", icat))
    }


def mbe_weights(emb_m: np.ndarray, emb_f: np.ndarray, weight: str) -> np.ndarray:
    """``(n_m, n_f)`` weights C(T_m, T_f): cosine similarities or dot products (float64)."""
    em = np.asarray(emb_m, dtype=np.float64)
    ef = np.asarray(emb_f, dtype=np.float64)
    if weight == "cosine":
        em = em / np.linalg.norm(em, axis=1, keepdims=True)
        ef = ef / np.linalg.norm(ef, axis=1, keepdims=True)
    return em @ ef.T


def mbe_interval(
    score_m: Sequence[float] | np.ndarray,
    score_f: Sequence[float] | np.ndarray,
    weights: np.ndarray,
    *,
    n_bootstrap: int,
    seed: int,
    confidence_level: float,
) -> tuple[float, float]:
    """Percentile CI of the MBE score (Kaneko et al. 2022, Eq. 2) over the sentences.

    The male and the female sentences are two strata, redrawn with replacement
    (:func:`weatkit.stats.resampling.bootstrap_draws`, scheme ``"stratified"``, male first);
    with c_m, c_f the multiplicities of resample r, W the weights and I_mf = [A(m) > A(f)]::

        MBE*_r = 100 · c_mᵀ (W ∘ I) c_f / c_mᵀ W c_f

    (a pair drawn a times on the male side and b times on the female side counts a·b times).
    Cost: R · n_m · n_f multiply-adds, in blocks of male rows.
    """
    sm = np.asarray(score_m, dtype=np.float64)
    sf = np.asarray(score_f, dtype=np.float64)
    sizes = [sm.size, sf.size]
    draw_m, draw_f = bootstrap_draws(sizes, n_bootstrap, seed=seed, scheme="stratified")
    c_m = counts_from_indices(draw_m, sm.size)
    c_f = counts_from_indices(draw_f, sf.size)
    numerator = np.zeros((n_bootstrap, sf.size))
    denominator = np.zeros((n_bootstrap, sf.size))
    step = max(1, (1 << 22) // max(sf.size, 1))
    for start in range(0, sm.size, step):
        block = weights[start : start + step]
        wins = block * (sm[start : start + step, None] > sf[None, :])
        numerator += c_m[:, start : start + step] @ wins
        denominator += c_m[:, start : start + step] @ block
    with np.errstate(invalid="ignore", divide="ignore"):
        replicates = 100.0 * (numerator * c_f).sum(axis=1) / (denominator * c_f).sum(axis=1)
    return _interval(replicates, confidence_level)


def mbe_wins(score_m: Sequence[float] | np.ndarray, score_f: Sequence[float] | np.ndarray) -> int:
    """#(A(m) > A(f)) over all male × female pairs (ties count 0), by sorting: for each male
    score, the female scores strictly below it."""
    sf = np.sort(np.asarray(score_f, dtype=np.float64))
    below = np.searchsorted(sf, np.asarray(score_m, dtype=np.float64), side="left")
    return int(below.sum())
