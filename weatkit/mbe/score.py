"""The MBE bias score (Kaneko et al., NAACL 2022, §3, Eq. 2) and its McNemar test.

Step 2 scores every target sentence ``T`` with AULA (Eq. 1; or AUL) and embeds it as the mean
last-layer hidden state over its non-special tokens (:meth:`weatkit.sentence.masked_lm.MaskedLM.
unmasked`). A causal LM (``method="mean-ll"``) scores it with the causal analogue of AUL, the
mean token log-likelihood of the sentence,

    A(T) = (1/n) Σ_{i=1}^{n} log P(w_i | w_<i)

(AUL predicts every token from the whole unmasked sentence, a causal LM from the tokens before
it; :meth:`weatkit.scoring.base.Scorer.causal_logprobs`, the first token conditioned on the
start token, :mod:`weatkit.scoring.hf`), and embeds it with :meth:`~weatkit.scoring.base.Scorer.
embed` (an hf model: the mean last hidden state over the sentence's tokens). Eq. 2 and the test
below are unchanged. Step 3 compares every male sentence with every female one:

    MBE = 100 × Σ_{T_m∈𝒯_m} Σ_{T_f∈𝒯_f} C(T_m, T_f) · I(A(T_m) > A(T_f))
              / Σ_{T_m∈𝒯_m} Σ_{T_f∈𝒯_f} C(T_m, T_f)                          (Eq. 2)

with ``A`` the sentence score, ``I`` the indicator (ties count 0) and ``C`` the similarity of the
two sentence embeddings. 50 means no preference; **above 50, the model gives the male sentences
the higher likelihood more often** (similarity-weighted). (The paper's prose says the opposite
direction, but Eq. 2 and ``eval.py`` count male-preferred pairs.)

Significance (§3): the model's indicator ``I`` over all pairs is compared with a random one
(Bernoulli(0.5) per pair) by McNemar's test; the paper reports p < 0.05 as "biased".
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Literal

import numpy as np
import pandas as pd
import torch
from scipy.stats import binomtest, chi2

from weatkit.engine.device import engine_dtype, resolve_device
from weatkit.errors import WeatkitError
from weatkit.scoring.base import Scorer
from weatkit.sentence.masked_lm import MaskedLM, TokenizedSentence

Weight = Literal["cosine", "dot"]
Method = Literal["aula", "aul", "mean-ll"]
WEIGHTS: tuple[str, ...] = ("cosine", "dot")
#: Sentence scores of masked LMs (``aula``, ``aul``) and of causal LMs (``mean-ll``).
METHODS: tuple[str, ...] = ("aula", "aul", "mean-ll")
CAUSAL_METHODS: tuple[str, ...] = ("mean-ll",)

#: Column names of the p-values in :meth:`MbeResult.to_frame` (file columns are frozen).
_P_COLUMNS = {"pvalue": "p_value", "pvalue_chi2": "p_value_chi2"}
#: Elements of one male-rows × female block (float64: 128 MiB).
_BLOCK = 1 << 24


def _rows_per_block(n_female: int) -> int:
    return max(1, _BLOCK // max(n_female, 1))


def _check_scores(score_m: np.ndarray, score_f: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    sm = np.asarray(score_m, dtype=np.float64).reshape(-1)
    sf = np.asarray(score_f, dtype=np.float64).reshape(-1)
    if sm.size == 0 or sf.size == 0:
        raise WeatkitError(
            f"MBE needs at least one male and one female sentence ({sm.size} male, "
            f"{sf.size} female)"
        )
    if not (np.isfinite(sm).all() and np.isfinite(sf).all()):
        raise WeatkitError("a sentence score is NaN or infinite")
    return sm, sf


def mbe_score(
    score_m: np.ndarray,
    score_f: np.ndarray,
    emb_m: np.ndarray,
    emb_f: np.ndarray,
    weight: Weight | str = "cosine",
    device: str | torch.device | None = None,
) -> float:
    """The MBE bias score, Eq. 2 of Kaneko et al. (2022) (module docstring).

    In [0, 100] when every weight is non-negative, as cosine similarities of MLM sentence
    embeddings (anisotropic, mostly positive) nearly always are; negative weights (e.g. centred
    random vectors) can push the ratio outside that range.

    Args:
        score_m: ``A(T_m)`` of the male sentences (n_m).
        score_f: ``A(T_f)`` of the female sentences (n_f).
        emb_m: sentence embeddings of the male sentences (n_m × d).
        emb_f: sentence embeddings of the female sentences (n_f × d).
        weight: ``C(T_m, T_f)``. ``"cosine"`` — cosine similarity of the embeddings, as the paper
            states. ``"dot"`` — the raw dot product ``e_m·e_f``, what the reference ``eval.py``
            computes: its ``cos_sim(F, M.T)`` divides the *matrix* of dot products by one constant,
            ``‖F‖_F·‖M‖_F`` (Frobenius norms of the stacked embeddings), which cancels between
            numerator and denominator of Eq. 2.
        device: torch device for the block products (``auto`` by default, via
            :func:`weatkit.engine.device.resolve_device`); float64 on CPU and CUDA, so both give
            the same score up to summation order (float32 on MPS).

    The sums run over male-row blocks (at most 2^24 pairs each), so 20k × 20k sentences fit in
    memory; no per-pair Python loop. Eq. 2 is applied as written, negative weights included.

    Raises:
        WeatkitError: empty sides, shapes that disagree, non-finite values, a zero embedding
            (cosine) or weights summing to zero.
    """
    sm, sf = _check_scores(score_m, score_f)
    em = np.asarray(emb_m, dtype=np.float64)
    ef = np.asarray(emb_f, dtype=np.float64)
    if em.ndim != 2 or ef.ndim != 2 or em.shape != (sm.size, ef.shape[1]) or len(ef) != sf.size:
        raise WeatkitError(
            f"embeddings of shape {em.shape} and {ef.shape} do not fit {sm.size} male and "
            f"{sf.size} female scores"
        )
    if weight not in WEIGHTS:
        raise WeatkitError(f"unknown weight {weight!r}: choose one of {', '.join(WEIGHTS)}")
    if not (np.isfinite(em).all() and np.isfinite(ef).all()):
        raise WeatkitError("a sentence embedding is NaN or infinite")
    dev = resolve_device("auto" if device is None else device)
    dtype = engine_dtype(dev)
    tm, tf = (torch.as_tensor(x, dtype=dtype, device=dev) for x in (em, ef))
    if weight == "cosine":
        norms_m, norms_f = tm.norm(dim=1), tf.norm(dim=1)
        if bool((norms_m == 0).any()) or bool((norms_f == 0).any()):
            raise WeatkitError("a sentence embedding is zero: its cosine similarity is undefined")
        tm, tf = tm / norms_m[:, None], tf / norms_f[:, None]
    am = torch.as_tensor(sm, dtype=dtype, device=dev)
    af = torch.as_tensor(sf, dtype=dtype, device=dev)
    numerator = torch.zeros((), dtype=dtype, device=dev)
    denominator = torch.zeros((), dtype=dtype, device=dev)
    step = _rows_per_block(sf.size)
    for start in range(0, sm.size, step):
        block = tm[start : start + step] @ tf.T  # C(T_m, T_f) of a block of male rows
        preferred = am[start : start + step, None] > af[None, :]  # I(A(T_m) > A(T_f))
        numerator += (block * preferred).sum()
        denominator += block.sum()
    total = float(denominator)
    if total == 0.0:
        raise WeatkitError("the similarity weights sum to zero: the MBE score is undefined")
    return 100.0 * float(numerator) / total


@dataclass(frozen=True)
class McNemarResult:
    """McNemar's test of the model's indicator against a random one over all pairs.

    Attributes:
        b: pairs where the model prefers the male sentence and the random draw does not.
        c: pairs where the random draw is 1 and the model's indicator 0.
        n_pairs: n_m × n_f.
        statistic: continuity-corrected chi-square ``(|b − c| − 1)² / (b + c)`` (1 df; 0 when
            b + c = 0).
        pvalue: exact two-sided binomial p of ``b`` out of ``b + c`` at 0.5 (1 when b + c = 0).
        pvalue_chi2: the chi-square p, ``chi2.sf(statistic, 1)``.
    """

    b: int
    c: int
    n_pairs: int
    statistic: float
    pvalue: float
    pvalue_chi2: float


def mcnemar_random(score_m: np.ndarray, score_f: np.ndarray, seed: int = 0) -> McNemarResult:
    """McNemar's test of ``I(A(T_m) > A(T_f))`` against a random indicator (MBE paper §3).

    Each pair (i, j) is classified twice, by the model (``M_ij = I(A(T_m,i) > A(T_f,j))``) and at
    random (``R_ij = u_ij < 0.5`` with ``u = np.random.default_rng(seed).random((n_m, n_f))``,
    drawn in male-row blocks, which gives the same stream as one draw); ``b = #(M=1, R=0)``,
    ``c = #(M=0, R=1)``. The exact binomial p (``scipy.stats.binomtest(b, b + c, 0.5)``, cheap
    even for 10^8 pairs) is the reported p-value; the continuity-corrected chi-square statistic
    and its p are given too. The pairs share sentences, so they are not independent: with many
    pairs the test flags even tiny departures from 50.
    """
    sm, sf = _check_scores(score_m, score_f)
    rng = np.random.default_rng(seed)
    b = c = 0
    step = _rows_per_block(sf.size)
    for start in range(0, sm.size, step):
        model = sm[start : start + step, None] > sf[None, :]
        random = rng.random(model.shape) < 0.5
        b += int(np.count_nonzero(model & ~random))
        c += int(np.count_nonzero(random & ~model))
    n = b + c
    if n == 0:
        statistic, p_value, p_chi2 = 0.0, 1.0, 1.0
    else:
        statistic = (abs(b - c) - 1) ** 2 / n
        p_value = float(binomtest(b, n, 0.5).pvalue)
        p_chi2 = float(chi2.sf(statistic, 1))
    return McNemarResult(b, c, sm.size * sf.size, float(statistic), p_value, p_chi2)


@dataclass(frozen=True)
class MbeResult:
    """One MBE evaluation.

    Attributes:
        method: sentence score ``A``: ``"aula"`` (paper Eq. 1) or ``"aul"``.
        weight: ``C``: ``"cosine"`` (paper) or ``"dot"`` (reference code).
        n_male: male sentences |𝒯_m|.
        n_female: female sentences |𝒯_f|.
        n_pairs: n_male × n_female.
        score: the MBE score, Eq. 2 (50 = no preference, > 50 = male sentences preferred).
        b: McNemar count, model prefers male and the random indicator does not.
        c: McNemar count, the random indicator is 1 and the model's 0.
        statistic: McNemar chi-square, continuity-corrected.
        pvalue: exact binomial McNemar p-value.
        pvalue_chi2: chi-square McNemar p-value.
        alpha: significance level.
        significant: ``pvalue < alpha`` (the model differs from random).
        seed: seed of the random indicator (and of the CLI's down-sampling).
    """

    method: str
    weight: str
    n_male: int
    n_female: int
    n_pairs: int
    score: float
    b: int
    c: int
    statistic: float
    pvalue: float
    pvalue_chi2: float
    alpha: float
    significant: bool
    seed: int

    def to_frame(self) -> pd.DataFrame:
        """The result as a one-row tidy table (one column per field; the p-values in the
        ``p_value`` and ``p_value_chi2`` columns, the names of the written files)."""
        return pd.DataFrame([asdict(self)]).rename(columns=_P_COLUMNS)


def score_column(method: str) -> str:
    """The column of :func:`evaluate_mbe`'s sentence table holding ``method``'s scores."""
    return method.replace("-", "_")


def _causal_scores(
    scorer: Scorer, texts: list[str], show_progress: bool | None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(mean token log-likelihood, token count, embedding)`` of each text under a causal LM."""
    if not all(isinstance(t, str) for t in texts):
        raise WeatkitError(
            "--method mean-ll scores sentence texts; the MBE token-id sets have none (use "
            "--parallel or --english/--target)"
        )
    scored = scorer.causal_logprobs(texts, show_progress=show_progress)
    counts = np.array([int(np.isfinite(t.logprobs).sum()) for t in scored])
    if (counts == 0).any():
        i = int(np.argmin(counts))
        raise WeatkitError(f"sentence {texts[i]!r} has no token with a log-probability")
    means = np.array([float(np.nanmean(t.logprobs)) for t in scored], dtype=np.float64)
    embedding = np.asarray(scorer.embed(texts, show_progress=show_progress), dtype=np.float32)
    return means, np.array([len(t.logprobs) for t in scored]), embedding


def evaluate_mbe(
    lm: MaskedLM | Scorer,
    male: Sequence[TokenizedSentence] | Sequence[str],
    female: Sequence[TokenizedSentence] | Sequence[str],
    *,
    method: Method | str = "aula",
    weight: Weight | str = "cosine",
    seed: int = 0,
    alpha: float = 0.05,
    show_progress: bool | None = None,
) -> tuple[MbeResult, pd.DataFrame, np.ndarray]:
    """MBE of ``lm`` on tokenised male and female target sentences (Steps 2 and 3).

    Both sides are scored in one :meth:`MaskedLM.unmasked` call (batched, cached), or, for a
    causal LM's Scorer with ``method="mean-ll"``, in one
    :meth:`~weatkit.scoring.base.Scorer.causal_logprobs` and one
    :meth:`~weatkit.scoring.base.Scorer.embed` call over the sentence texts (``male`` and
    ``female`` are then strings); the score is :func:`mbe_score` on the device of ``lm``'s
    options, the test :func:`mcnemar_random`.

    Returns:
        ``(result, sentences, embedding)``: the :class:`MbeResult`; one row per sentence with
        ``set`` (male/female), ``index`` (position in its side's list), ``n_tokens`` (ids
        including the special tokens; a causal LM: the sentence's tokens, the start token not
        counted), ``aul`` and ``aula`` (natural logs; a causal LM: ``mean_ll``); and the
        sentence embeddings the weights were computed from, one row per sentence in the same
        order.
    """
    if method not in METHODS:
        raise WeatkitError(f"unknown method {method!r}: choose one of {', '.join(METHODS)}")
    if not 0 < alpha < 1:
        raise WeatkitError(f"alpha must be between 0 and 1, not {alpha}")
    n_m, n_f = len(male), len(female)
    if n_m == 0 or n_f == 0:
        raise WeatkitError(
            f"MBE needs at least one male and one female sentence ({n_m} male, {n_f} female)"
        )
    causal = method in CAUSAL_METHODS
    if causal != (not isinstance(lm, MaskedLM)):
        name = lm.model_name if isinstance(lm, MaskedLM) else str(lm.spec)
        what = "a masked LM" if isinstance(lm, MaskedLM) else "a causal LM"
        needs = "a causal LM" if causal else "a masked LM"
        raise WeatkitError(f"--method {method} needs {needs}; {name} is {what}")
    if causal:
        values, n_tokens, embedding = _causal_scores(lm, [*male, *female], show_progress)
        columns = {"n_tokens": n_tokens, "mean_ll": values}
        device = None  # the block products on the default device
    else:
        scores = lm.unmasked([*male, *female], show_progress=show_progress)
        values = scores.aula if method == "aula" else scores.aul
        embedding = scores.embedding
        columns = {
            "n_tokens": [len(s.ids) for s in (*male, *female)],
            "aul": scores.aul,
            "aula": scores.aula,
        }
        device = lm.options.device
    score = mbe_score(
        values[:n_m], values[n_m:], embedding[:n_m], embedding[n_m:], weight=weight,
        device=device,
    )  # fmt: skip
    test = mcnemar_random(values[:n_m], values[n_m:], seed)
    result = MbeResult(
        method=str(method),
        weight=str(weight),
        n_male=n_m,
        n_female=n_f,
        n_pairs=test.n_pairs,
        score=score,
        b=test.b,
        c=test.c,
        statistic=test.statistic,
        pvalue=test.pvalue,
        pvalue_chi2=test.pvalue_chi2,
        alpha=float(alpha),
        significant=bool(test.pvalue < alpha),
        seed=int(seed),
    )
    sentences = pd.DataFrame(
        {"set": ["male"] * n_m + ["female"] * n_f, "index": [*range(n_m), *range(n_f)], **columns}
    )
    return result, sentences, embedding
