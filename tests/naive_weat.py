"""Slow, obvious implementations of the WEAT formulas (Caliskan et al. 2017), for checking."""

from __future__ import annotations

import itertools
import math

import numpy as np


def cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.dot(u, v) / (math.sqrt(np.dot(u, u)) * math.sqrt(np.dot(v, v))))


def eucl_sim(u: np.ndarray, v: np.ndarray) -> float:
    """CA-WEAT code: 1 / (1 + ||u/|u| - v/|v|||)."""
    d = u / np.linalg.norm(u) - v / np.linalg.norm(v)
    return 1.0 / (1.0 + math.sqrt(float(np.dot(d, d))))


def csls_sim_factory(vocab: list[np.ndarray], k: int = 10):
    """CSLS over distinct test words: 2cos(a,b) - r(a) - r(b), r = mean top-k cos to others."""
    distinct: list[np.ndarray] = []
    for v in vocab:
        if not any(np.array_equal(v, u) for u in distinct):
            distinct.append(v)

    def r(w: np.ndarray) -> float:
        others = sorted((cos(w, u) for u in distinct if not np.array_equal(u, w)), reverse=True)
        top = others[:k]
        return sum(top) / len(top)

    return lambda a, b: 2 * cos(a, b) - r(a) - r(b)


def s_word(w, A, B, sim=cos) -> float:
    return sum(sim(w, a) for a in A) / len(A) - sum(sim(w, b) for b in B) / len(B)


def statistic(X, Y, A, B, sim=cos) -> float:
    return sum(s_word(x, A, B, sim) for x in X) - sum(s_word(y, A, B, sim) for y in Y)


def effect_size(X, Y, A, B, ddof: int = 1, sim=cos) -> float:
    sx = [s_word(x, A, B, sim) for x in X]
    sy = [s_word(y, A, B, sim) for y in Y]
    both = sx + sy
    mean = sum(both) / len(both)
    std = math.sqrt(sum((v - mean) ** 2 for v in both) / (len(both) - ddof))
    return (sum(sx) / len(sx) - sum(sy) / len(sy)) / std


def exact_pvalue(X, Y, A, B, alternative: str = "greater") -> float:
    """Fraction of all equal-size re-splits of X∪Y with S_i >= S (observed split included)."""
    observed = statistic(X, Y, A, B)
    union = list(X) + list(Y)
    scores = [s_word(w, A, B) for w in union]
    total = sum(scores)
    ge = le = n = 0
    for combo in itertools.combinations(range(len(union)), len(X)):
        s_i = 2 * sum(scores[i] for i in combo) - total
        ge += s_i >= observed - 1e-12
        le += s_i <= observed + 1e-12
        n += 1
    if alternative == "greater":
        return ge / n
    if alternative == "less":
        return le / n
    return min(1.0, 2 * min(ge / n, le / n))
