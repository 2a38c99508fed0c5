"""SC-WEAT, the single-category WEAT of one word (Caliskan et al. 2017's WEFAT statistic; as a
test: Toney & Caliskan 2021, Caliskan, Ajay, Charlesworth, Wolfe & Banaji 2022).

For a word w and attribute sets A and B (Caliskan, Bryson & Narayanan 2017, "Methods", WEFAT)::

    s(w, A, B) = mean_{a∈A} cos(w, a) − mean_{b∈B} cos(w, b)
    ES(w)      = s(w, A, B) / std_{x∈A∪B} cos(w, x)

with ``ddof`` degrees of freedom in the std (1, as the WEAT engine's default and the cbn
replication; 0 is ``np.std``). ES > 0: w is nearer to A (the stereotypical side is *above* 0
when A is the attribute stereotypically associated with w).

**p-value**: the permutation test of SC-WEAT: the null distribution of s over the re-splits of
A∪B into sets of sizes |A| and |B| (the std does not change with the split, so ES and s order
the splits alike). The splits come from :func:`weatkit.stats.resampling.permutation_plan`, as
the WEAT engine's (all C(|A|+|B|, |A|) splits when there are at most ``max_exact``, else
``n_permutations`` distinct random splits from a generator seeded by
``[seed, 1, 0, |A|, |B|, 1]``: the plan depends only on the seed and the sizes), and the p from
:func:`~weatkit.stats.resampling.pvalue_from_counts` (exact: k/N with the observed split among
the N; Monte Carlo: (k + 1)/(B + 1)), counting splits with s ≥ the observed s (within 1e-9),
``alternative`` ``greater``, ``less`` or ``two-sided``, as the engine does.

WEFE 1.0.1 has no SC-WEAT (nor WEFAT). **Bootstrap**: A and B are resampled, in this order
(:mod:`weatkit.association._common`); the cosines are computed once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from weatkit.arguments import wrong_type
from weatkit.association._common import (
    N_BOOTSTRAP,
    AssociationResult,
    Inputs,
    WordSet,
    bootstrap_weights,
    chunks,
    cosines,
    resampled,
    weighted_mean,
)
from weatkit.engine.weat import EngineOptions
from weatkit.stats.resampling import PermutationPlan, permutation_plan, pvalue_from_counts

if TYPE_CHECKING:  # pragma: no cover
    from weatkit.embeddings.vectors import WordVectors


@dataclass(frozen=True, kw_only=True)
class ScWeatResult(AssociationResult):
    """The effect size ES(w) with its permutation p-value and bootstrap interval.

    Attributes:
        pvalue: the permutation p (None with ``n_permutations=0``).
        association: s(w, A, B), the numerator.
        permutation_method: ``exact`` or ``monte-carlo`` (None without p); n_permutations:
            splits used.
    """

    pvalue: float | None
    association: float
    permutation_method: str | None
    n_permutations: int


def word_effects(
    sim: np.ndarray, n_a: int, w_a: np.ndarray, w_b: np.ndarray, ddof: int
) -> tuple[np.ndarray, np.ndarray]:
    """s(w, A, B) and ES(w) ``(n_w, R)`` for words with cosines ``sim (n_w, n_a + n_b)`` to A
    then B, under attribute weights ``w_a (R, n_a)``, ``w_b (R, n_b)`` (each word of A∪B counted
    as often as it is drawn, in the means and in the std); ES is NaN where the std is 0."""
    s = weighted_mean(sim[:, :n_a], w_a) - weighted_mean(sim[:, n_a:], w_b)
    w = np.concatenate([w_a, w_b], axis=1)
    n = w.sum(axis=1)
    mean = weighted_mean(sim, w)
    std = np.sqrt(np.clip((sim * sim) @ w.T - n * mean**2, 0.0, None) / (n - ddof))
    with np.errstate(invalid="ignore", divide="ignore"):
        return s, np.where(std > 0, s / std, np.nan)


def sc_weat(
    word: str | np.ndarray,
    A: WordSet,
    B: WordSet,
    *,
    vectors: WordVectors | None = None,
    ddof: int = 1,
    alternative: str = "greater",
    n_permutations: int = 10000,
    max_exact: int = 1_000_000,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> ScWeatResult:
    """The single-category WEAT of one word against the attribute sets A and B.

    Args:
        word: the word, or its ``(dim,)`` vector.
        A, B: the attribute sets, words or ``(n, dim)`` arrays.
        vectors: the word vectors the words are looked up in.
        ddof: of the standard deviation (1 or 0).
        alternative: ``greater`` (w nearer to A than by chance), ``less`` or ``two-sided``.
        n_permutations: random splits when they cannot all be enumerated (0: no p-value).
        max_exact: enumerate all splits of A∪B when there are at most this many.
        n_bootstrap, confidence_level, seed: the bootstrap interval (0 resamples: none).

    Example:
        >>> import numpy as np
        >>> A = np.array([[1.0, 0.0], [1.0, 0.2]])
        >>> B = np.array([[0.0, 1.0], [0.2, 1.0]])
        >>> res = sc_weat(np.array([1.0, 0.1]), A, B, n_bootstrap=0)
        >>> res.pvalue, res.permutation_method  # 1 of the 6 splits is as extreme
        (0.16666666666666666, 'exact')
    """
    if isinstance(word, np.ndarray) and word.ndim in (1, 2) and word.size == word.shape[-1]:
        words: WordSet = word.reshape(1, -1)
    elif isinstance(word, str):
        words = [word]
    else:
        raise wrong_type("sc_weat", "word", "one word or one (dim,) vector", word)
    (result,) = sc_weat_words(
        words,
        A,
        B,
        vectors=vectors,
        ddof=ddof,
        alternative=alternative,
        n_permutations=n_permutations,
        max_exact=max_exact,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        seed=seed,
    ).values()
    return result


def sc_weat_words(
    words: WordSet,
    A: WordSet,
    B: WordSet,
    *,
    vectors: WordVectors | None = None,
    ddof: int = 1,
    alternative: str = "greater",
    n_permutations: int = 10000,
    max_exact: int = 1_000_000,
    n_bootstrap: int = N_BOOTSTRAP,
    confidence_level: float = 0.95,
    seed: int = 0,
) -> dict[str, ScWeatResult]:
    """:func:`sc_weat` of every word of ``words`` (words, or an ``(n, dim)`` array whose rows
    are named ``"0"``, ``"1"``, ...), by name: each result is the one :func:`sc_weat` gives
    that word, to rounding (the splits and resamples depend only on the seed and the sizes of A
    and B, so all words share them and their cosines are computed at once). Arguments as
    :func:`sc_weat`."""
    options = EngineOptions(
        ddof=ddof,
        alternative=alternative,
        n_permutations=n_permutations,
        max_exact=max_exact,
        n_bootstrap=n_bootstrap,
        confidence_level=confidence_level,
        seed=seed,
    )
    options.validate()
    inputs = Inputs("sc_weat", vectors, normalize=False)
    w = inputs.one("word" if len(words) == 1 else "words", words)
    a, b = inputs.one("A", A), inputs.one("B", B)
    sim = cosines(w.rows, np.concatenate([a.rows, b.rows]))  # (n_w, n_a + n_b), once
    s, effect = word_effects(sim, len(a), np.ones((1, len(a))), np.ones((1, len(b))), ddof)
    boot = np.empty((len(w), 0))
    if n_bootstrap:
        w_a, w_b = bootstrap_weights((len(a), len(b)), n_bootstrap, seed)
        parts = chunks(n_bootstrap, sim.size)
        boot = np.concatenate(
            [word_effects(sim, len(a), w_a[p], w_b[p], ddof)[1] for p in parts], axis=1
        )
    pvalues: list[float | None] = [None] * len(w)
    method, n_splits = None, 0
    if n_permutations:
        plan = permutation_plan(
            len(a), len(b), n_permutations, max_exact, seed, (1, 0, len(a), len(b))
        )
        pvalues = permutation_pvalues(sim, len(a), plan, alternative).tolist()
        method, n_splits = "exact" if plan.exact else "monte-carlo", plan.n
    return {
        name: ScWeatResult(
            **resampled(  # type: ignore[arg-type]
                effect[i, 0], boot[i] if n_bootstrap else None, n_bootstrap, confidence_level, seed
            ),
            pvalue=pvalues[i],
            association=float(s[i, 0]),
            permutation_method=method,
            n_permutations=n_splits,
        )
        for i, name in enumerate(w.words)
    }


def permutation_pvalues(
    sim: np.ndarray, n_a: int, plan: PermutationPlan, alternative: str
) -> np.ndarray:
    """The permutation p of s(w, A, B) over the splits of ``plan`` (module docstring) of every
    word ``(n_w,)``, ``sim`` the ``(n_w, n_a + n_b)`` cosines of the words to A then B (the
    splits' memberships converted once for all words)."""
    observed = np.array([row[:n_a].sum() for row in sim])
    tol = 1e-9 * np.maximum(np.abs(observed), 1.0)
    ge = np.zeros(len(sim), dtype=np.int64)
    le = np.zeros(len(sim), dtype=np.int64)
    for part in chunks(plan.n, sim.size):
        sums = plan.membership[part] @ sim.T  # (r, n_w): Σ_{A'} cos, s increases with it
        ge += (sums >= observed - tol).sum(axis=0)
        le += (sums <= observed + tol).sum(axis=0)
    return pvalue_from_counts(ge, le, plan.n, plan.exact, alternative)
