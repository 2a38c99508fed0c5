"""MAC, the mean average cosine distance (Manzini, Lim, Tsvetkov & Black, NAACL 2019).

For target words t (of one or more target sets T_1 … T_m, e.g. words for religions) and
attribute sets A_1 … A_k (e.g. stereotypical attributes of each)::

    S(t, A_j) = (1/|A_j|) Σ_{a∈A_j} (1 − cos(t, a))          (Manzini et al., eq. 7)
    MAC       = (1/|T|) Σ_{t∈T} (1/k) Σ_j S(t, A_j)           T = T_1 ∪ … ∪ T_m

a cosine *distance* in [0, 2]: larger means the targets are farther from the attributes (less
associated with them). It has no neutral value; it is read by comparing embeddings (before and
after debiasing, in the paper). ``per_set`` gives the MAC of each target set on its own.

**WEFE 1.0.1** (``wefe.metrics.MAC``) computes the same number: the mean of S(t, A_j) over every
pair (target word, attribute set) of its query, its target sets pooled. Its ``normalize`` option
does not change a cosine, so weatkit has none.

**Bootstrap** (:mod:`weatkit.association._common`): the target sets and then the attribute sets
are resampled, in their order; the cosine distances are computed once and every resample
re-weights them: S*(t, A_j) = Σ_a w_a (1 − cos(t, a)) / Σ_a w_a, MAC* = Σ_t w_t S̄*(t) / Σ_t w_t,
each target set resampled within itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from weatkit.association._common import (
    N_BOOTSTRAP,
    AssociationResult,
    Inputs,
    Vectors,
    WordSets,
    bootstrap_weights,
    check_resampling,
    chunks,
    cosines,
    interval,
    resampled,
    unit_weights,
    weighted_mean,
)

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors


@dataclass(frozen=True, kw_only=True)
class MacResult(AssociationResult):
    """MAC with its bootstrap interval.

    Attributes:
        per_set: the MAC of each target set alone; per_set_ci: their intervals (None without
            the bootstrap).
        distances: S(t, A_j) per target set, target word and attribute set (WEFE's
            ``targets_eval``).
    """

    per_set: dict[str, float]
    per_set_ci: dict[str, tuple[float, float] | None]
    distances: dict[str, dict[str, dict[str, float]]]


def mac(
    targets: WordSets,
    attributes: WordSets,
    *,
    vectors: WordVectors | None = None,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> MacResult:
    """The mean average cosine distance of the target sets to the attribute sets.

    Args:
        targets: one or more target sets (a list, or a mapping name -> set).
        attributes: one or more attribute sets.
        vectors: the word vectors the words are looked up in.
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> T = {"T": np.array([[1.0, 0.0], [0.0, 1.0]])}
        >>> res = mac(T, [np.array([[1.0, 0.0]]), np.array([[1.0, 1.0]])], n_bootstrap=0)
        >>> round(res.statistic, 6)  # (0 + 1 + (1 − 0.7071) · 2) / 4
        0.396447
    """
    check_resampling(n_bootstrap, confidence_level, seed)
    inputs = Inputs("mac", vectors, normalize=False)
    t_sets = inputs.many("target sets", targets)
    a_sets = inputs.many("attribute sets", attributes)
    t_all = np.concatenate([t.rows for t in t_sets])
    dist = [1.0 - cosines(t_all, a.rows) for a in a_sets]  # once: (N_t, n_j) each
    sizes = [len(s) for s in (*t_sets, *a_sets)]

    observed = weighted_mac(dist, len(t_sets), unit_weights(sizes))
    boot = None
    if n_bootstrap:
        boot = weighted_mac(dist, len(t_sets), bootstrap_weights(sizes, n_bootstrap, seed))
    per_set_ci: dict[str, tuple[float, float] | None] = {t.name: None for t in t_sets}
    if boot is not None:
        per_set_ci = {
            t.name: interval(v, confidence_level)[0] for t, v in zip(t_sets, boot[1:], strict=True)
        }
    return MacResult(
        **resampled(  # type: ignore[arg-type]
            observed[0, 0], None if boot is None else boot[0], n_bootstrap, confidence_level, seed
        ),
        per_set={t.name: float(v[0]) for t, v in zip(t_sets, observed[1:], strict=True)},
        per_set_ci=per_set_ci,
        distances=_by_word(dist, t_sets, a_sets),
    )


def _by_word(
    dist: list[np.ndarray], t_sets: list[Vectors], a_sets: list[Vectors]
) -> dict[str, dict[str, dict[str, float]]]:
    """S(t, A_j) per target set, target word and attribute set."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    row = 0
    for t in t_sets:
        out[t.name] = {}
        for word in t.words:
            out[t.name][word] = {
                a.name: float(d[row].mean()) for a, d in zip(a_sets, dist, strict=True)
            }
            row += 1
    return out


def weighted_mac(dist: list[np.ndarray], m: int, weights: list[np.ndarray]) -> np.ndarray:
    """``(1 + m, R)``: the pooled MAC, then each target set's, of every resample (``weights``:
    the counts of the m target sets, then of the attribute sets; ``dist`` the cosine distances
    of the target sets' rows, one after the other, to each attribute set)."""
    w_t, w_a = weights[:m], weights[m:]
    n_resamples = w_t[0].shape[0]
    out = np.empty((1 + m, n_resamples))
    for part in chunks(n_resamples, len(dist[0]) * (1 + len(dist))):
        score = sum(weighted_mean(d, w[part]) for d, w in zip(dist, w_a, strict=True)) / len(dist)
        start, total, count = 0, 0.0, 0.0
        for k, w in enumerate(w_t):
            block = (score[start : start + w.shape[1]] * w[part].T).sum(axis=0)
            out[1 + k, part] = block / w[part].sum(axis=1)
            total, count = total + block, count + w[part].sum(axis=1)
            start += w.shape[1]
        out[0, part] = total / count
    return out
