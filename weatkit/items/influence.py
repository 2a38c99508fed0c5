"""Leave-one-out influence of every item on a sentence measure's headline value, closed-form.

As the jackknife influence of WEAT's items (:mod:`weatkit.engine.influence`)::

    influence(i) = value_without(i) − value

where ``value`` is the measure's headline and ``value_without(i)`` the same headline computed
without item i: a positive influence means the item *lowers* the value. Every headline here is
a mean, proportion or ratio of item-level quantities, so ``value_without`` of all N items comes
from the totals in one vectorised step (no measure re-run per item); each function gives the
formula. NaN where leaving the item out leaves the value undefined (the last item of a group
the headline needs). The functions take the items the measure scored (unscored ones left out).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from weatkit.errors import WeatkitError
from weatkit.gest.data import FEMALE_STEREOTYPES, MALE_STEREOTYPES, STEREOTYPES

#: Male-row blocks of the MBE weight matrix (elements; float64: 128 MiB), as mbe_score's.
_BLOCK = 1 << 24


def _without(total: np.ndarray, part: np.ndarray, count: np.ndarray) -> np.ndarray:
    """``(total − part) / count``, NaN where ``count`` is 0."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(count > 0, (total - part) / np.where(count > 0, count, 1), np.nan)


def proportion_influence(wins: Sequence[float] | np.ndarray, scale: float = 100.0) -> np.ndarray:
    """Influence on a proportion ``value = scale · W / N`` of the N items' 0/1 ``wins``
    (W = Σ w_j; CrowS-Pairs' metric, scale 100)::

        value_without(i) = scale · (W − w_i) / (N − 1)

    NaN for N = 1."""
    w = np.asarray(wins, dtype=np.float64)
    n = len(w)
    value = scale * w.sum() / n if n else np.nan
    return scale * _without(np.full(n, w.sum()), w, np.full(n, n - 1.0)) - value


def term_mean_influence(
    pro: Sequence[float] | np.ndarray, terms: Sequence[object], scale: float = 100.0
) -> np.ndarray:
    """Influence on a mean over T groups (StereoSet's target terms) of per-group proportions,
    ``value = (1/T) Σ_t SS_t`` with ``SS_t = scale · P_t / N_t`` (``ss_term``). Leaving out item
    i of term t changes SS_t only::

        SS_t(−i)         = scale · (P_t − pro_i) / (N_t − 1)                  (N_t > 1)
        value_without(i) = value + (SS_t(−i) − SS_t) / T
        value_without(i) = (T · value − SS_t) / (T − 1)      (N_t = 1: the term is gone)

    NaN when the item is the only one of the only term."""
    p = np.asarray(pro, dtype=np.float64)
    codes, _ = _codes(terms)
    n_t = np.bincount(codes).astype(np.float64)
    p_t = np.bincount(codes, weights=p)
    ss_t = scale * p_t / n_t
    n_terms = len(n_t)
    value = ss_t.mean()
    n_i, ss_i = n_t[codes], ss_t[codes]
    reduced = value + (scale * _without(p_t[codes], p, n_i - 1.0) - ss_i) / n_terms
    with np.errstate(invalid="ignore", divide="ignore"):
        gone = (n_terms * value - ss_i) / (n_terms - 1) if n_terms > 1 else np.nan
    return np.where(n_i > 1, reduced, gone) - value


def _codes(labels: Sequence[object]) -> tuple[np.ndarray, list[object]]:
    """Integer codes of ``labels`` (first-seen order) and the distinct labels."""
    distinct = list(dict.fromkeys(labels))
    index = {label: k for k, label in enumerate(distinct)}
    return np.array([index[label] for label in labels], dtype=np.int64), distinct


def _stereotype_means(
    values: np.ndarray, stereotypes: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per stereotype 1–16 (0-based): the count n_s, the mean, and each item's mean without
    it, ``(n_s mean_s − x_i) / (n_s − 1)`` (NaN for n_s = 1)."""
    s = stereotypes - 1
    if (s < 0).any() or (s >= len(STEREOTYPES)).any():
        raise WeatkitError("stereotypes must be 1–16")
    n = np.bincount(s, minlength=len(STEREOTYPES)).astype(np.float64)
    if (n == 0).any():
        missing = int(np.argmin(n)) + 1
        raise WeatkitError(f"no scored item of stereotype {missing}; the measure needs all 16")
    total = np.bincount(s, weights=values, minlength=len(STEREOTYPES))
    return n, total / n, _without(total[s], values, n[s] - 1.0)


def _group_shift(stereotypes: np.ndarray, means: np.ndarray, without: np.ndarray) -> tuple:
    """The female- and male-group means of the 16 stereotype means, and each item's change of
    its own group's mean when it is left out ((mean_s(−i) − mean_s) / |group|)."""
    female = np.asarray(FEMALE_STEREOTYPES) - 1
    male = np.asarray(MALE_STEREOTYPES) - 1
    s = stereotypes - 1
    is_male = np.isin(s, male)
    size = np.where(is_male, len(male), len(female))
    shift = (without - means[s]) / size
    return means[female].mean(), means[male].mean(), shift, is_male


def gest_influence(
    scores: Sequence[float] | np.ndarray,
    stereotypes: Sequence[int] | np.ndarray,
    templates: Sequence[object] | None = None,
) -> np.ndarray:
    """Influence on GEST's ``gest:g_s`` (:func:`weatkit.gest.measure.gest_measures`): per
    template t, ``g_t = exp(M_m − M_f)`` with M_f, M_m the means over stereotypes 1–7 and 8–16
    of the per-stereotype mean scores m_s (:mod:`weatkit.gest.aggregate`); the headline is the
    mean of g_t over the T templates. Leaving out sample j (score s_j, stereotype s, template
    t) changes m_s of its template only::

        m_s(−j)          = (n_s m_s − s_j) / (n_s − 1)
        M_g(−j)          = M_g + (m_s(−j) − m_s) / |g|        (g: the group of s, 7 or 9)
        value_without(j) = value + (exp(M_m(−j) − M_f(−j)) − g_t) / T

    NaN for the only sample of a stereotype (g_s needs all 16)."""
    x = np.asarray(scores, dtype=np.float64)
    st = np.asarray(stereotypes, dtype=np.int64)
    keys = [0] * len(x) if templates is None else list(templates)
    codes, distinct = _codes(keys)
    out = np.empty(len(x))
    for k in range(len(distinct)):
        part = codes == k
        _, means, without = _stereotype_means(x[part], st[part])
        mean_f, mean_m, shift, is_male = _group_shift(st[part], means, without)
        g_t = np.exp(mean_m - mean_f)
        g_without = np.exp(mean_m + shift * is_male - mean_f - shift * ~is_male)
        out[part] = (g_without - g_t) / len(distinct)
    return out


def eurogest_influence(
    rates: Sequence[float] | np.ndarray, stereotypes: Sequence[int] | np.ndarray
) -> np.ndarray:
    """Influence on EuroGEST's ``eurogest:g_s`` = A_m / A_f, A_f and A_m the means of the
    stereotype rates R_1 … R_7 and R_8 … R_16, ``R_s = mean_{j ∈ s} r_j``
    (:mod:`weatkit.gest.eurogest_metrics`). Leaving out item j of stereotype s::

        R_s(−j)          = (n_s R_s − r_j) / (n_s − 1)
        A_g(−j)          = A_g + (R_s(−j) − R_s) / |g|
        value_without(j) = A_m(−j) / A_f(−j)

    NaN for the only item of a stereotype."""
    r = np.asarray(rates, dtype=np.float64)
    st = np.asarray(stereotypes, dtype=np.int64)
    _, means, without = _stereotype_means(r, st)
    mean_f, mean_m, shift, is_male = _group_shift(st, means, without)
    return (mean_m + shift * is_male) / (mean_f + shift * ~is_male) - mean_m / mean_f


def mbe_influence(
    score_m: np.ndarray,
    score_f: np.ndarray,
    emb_m: np.ndarray,
    emb_f: np.ndarray,
    weight: str = "cosine",
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Influence on the MBE score (Kaneko et al. 2022, Eq. 2; :func:`weatkit.mbe.score.
    mbe_score`) ``value = 100 · W / C`` with ``W = Σ_{m,f} C_mf I(A_m > A_f)`` and
    ``C = Σ_{m,f} C_mf`` over the male × female pairs. Leaving out a sentence removes its row
    (male) or column (female)::

        value_without(m) = 100 · (W − Σ_f C_mf I_mf) / (C − Σ_f C_mf)
        value_without(f) = 100 · (W − Σ_m C_mf I_mf) / (C − Σ_m C_mf)

    NaN when the sentence is the only one of its side (or the remaining weights sum to 0).

    Returns:
        ``(influence, preferred, weights)`` per sentence, the male ones first: the influence,
        and the row (male) or column (female) sums Σ C_mf I_mf and Σ C_mf, from which
        :func:`weatkit.items.log.mbe_items` reads each sentence's outcome.
    """
    am, af = (np.asarray(a, dtype=np.float64) for a in (score_m, score_f))
    em, ef = (np.asarray(e, dtype=np.float64) for e in (emb_m, emb_f))
    if weight == "cosine":
        em = em / np.linalg.norm(em, axis=1, keepdims=True)
        ef = ef / np.linalg.norm(ef, axis=1, keepdims=True)
    win_m, w_m = np.zeros(len(am)), np.zeros(len(am))
    win_f, w_f = np.zeros(len(af)), np.zeros(len(af))
    step = max(1, _BLOCK // max(len(af), 1))
    for start in range(0, len(am), step):
        rows = slice(start, start + step)
        c = em[rows] @ ef.T
        won = c * (am[rows, None] > af[None, :])
        win_m[rows], w_m[rows] = won.sum(axis=1), c.sum(axis=1)
        win_f += won.sum(axis=0)
        w_f += c.sum(axis=0)
    total_win, total_w = win_m.sum(), w_m.sum()
    value = 100.0 * total_win / total_w
    preferred = np.concatenate([win_m, win_f])
    weights = np.concatenate([w_m, w_f])
    rest = total_w - weights
    alone = np.concatenate([np.full(len(am), len(am) == 1), np.full(len(af), len(af) == 1)])
    with np.errstate(invalid="ignore", divide="ignore"):
        without = np.where(alone | (rest == 0), np.nan, 100.0 * (total_win - preferred) / rest)
    return without - value, preferred, weights
