"""CEAT's draws and their combined effect size (Guo & Caliskan, AIES 2021, §3.2).

Every word w of the sets X, Y (targets) and A, B (attributes) has vectors ``v_w,1 … v_w,c_w`` in
c_w contexts. Draw i (i = 1 … N) takes one context ``k_i(w)`` of every word
(:func:`weatkit.stats.resampling.context_draws`) and computes WEAT's effect size on those
vectors, with cos the cosine similarity:

    s_i(w) = mean_{a ∈ A} cos(v_w, v_a) − mean_{b ∈ B} cos(v_w, v_b)    (v_· at k_i(·))
    ES_i   = (mean_{x ∈ X} s_i(x) − mean_{y ∈ Y} s_i(y)) / sd_{w ∈ X∪Y} s_i(w)
    V_i    = sd_{w ∈ X∪Y} s_i(w)²                    (sd with ddof = 1, as ceat.py)

``V_i`` is the paper's "in-sample variance" of ES_i: the variance of the association scores of
the draw, as ``ceat.py``'s ``effect_size`` returns it (not the sampling variance of a Cohen's d).
The draws are pooled by a random-effects model with the DerSimonian–Laird between-draw variance
(:func:`weatkit.stats.meta.random_effects`, which computes exactly these steps):

    W_i = 1 / V_i,   Q = Σ W_i ES_i² − (Σ W_i ES_i)² / Σ W_i
    σ²_between = (Q − (N − 1)) / (Σ W_i − Σ W_i² / Σ W_i)  if Q > N − 1, else 0
    v_i = 1 / (V_i + σ²_between)
    CES = Σ v_i ES_i / Σ v_i,    SE(CES) = √(1 / Σ v_i)

with the normal interval CES ± z_{1−α/2} SE(CES), and the p-value of z = CES / SE(CES): two-sided
``2 (1 − Φ(|z|))`` as the paper writes it (default), or one-sided ``1 − Φ(z)`` (``greater``,
what ``ceat.py``'s ``ceat_meta`` computes with ``scipy.stats.norm.sf``; ``--compat ceat``), or
``Φ(z)`` (``less``). The spread of the draws is reported by quantiles of the ES_i.

Computation: all draws at once, in blocks of draws, on the engine's device
(:mod:`weatkit.engine.device`) in float64, with unit vectors ``u``, in one of two ways
(:func:`choose_method` takes the cheaper; the same numbers up to rounding):

* ``table``: the cosine of every target context with every attribute context is computed once,
  ``S = U_T U_AB^T`` (one matrix product), and each draw gathers its (n_x + n_y) × (n_a + n_b)
  entries: O(N · n_T · n_AB) after the table, but the table grows with the square of the number
  of contexts per word;
* ``vectors``: ``mean_a cos(v_w, v_a) = u_w · ū_A,i`` with ``ū_A,i`` the mean of the drawn
  attribute vectors of draw i, so a block gathers the drawn vectors ``(draws, words, d)``,
  averages the A and B rows and takes one batched product: O(N · m · d), whatever the number of
  contexts.

Where ``ceat.py`` differs: it draws with NumPy's global, unseeded generator, one
``np.random.randint`` per word and draw (so its numbers cannot be reproduced run to run; on the
same draws the arithmetic here is its arithmetic, ``tests/test_ceat.py``); its p is one-sided;
it gives no interval. It takes each word's vector from the last sub-token of its first
occurrence in a 9-word window of the sentence at the last layer (``generate_ebd_bert.py``);
here the extractor pools the occurrence's sub-tokens by ``--subwords`` at ``--layer``
(:mod:`weatkit.ceat.run`).

Guo, W. & Caliskan, A. (2021). Detecting emergent intersectional biases: contextualized word
embeddings contain a distribution of human-like biases. AIES 2021. Reference code:
https://github.com/weiguowilliam/CEAT (``code/ceat.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
import torch

from weatkit.engine.device import cpu_threads, engine_dtype, resolve_device
from weatkit.engine.weat_types import ALTERNATIVES
from weatkit.errors import DataError, WeatkitError
from weatkit.stats.meta import random_effects
from weatkit.stats.resampling import context_draws

#: The quantiles of the draws' effect sizes a result reports.
QUANTILES = (0.025, 0.25, 0.5, 0.75, 0.975)
#: Bytes of drawn vectors one block holds at most.
BLOCK_BYTES = 64 * 2**20


@dataclass(frozen=True)
class CeatResult:
    """CEAT's combined effect size, scipy-style (the module docstring has the formulas).

    Attributes:
        statistic: CES.
        pvalue: of z = CES / SE(CES) under ``alternative``.
        confidence_interval: CES ± z_{1−α/2} SE(CES).
        se: SE(CES).
        tau2: σ²_between (DerSimonian–Laird).
        q: Cochran's Q of the draws; i2: I².
        effect_sizes: ES_i of every draw, (N,).
        variances: V_i of every draw, (N,).
        quantiles: quantile -> ES quantile (:data:`QUANTILES`).
        alternative, confidence_level: as asked.
    """

    statistic: float
    pvalue: float
    confidence_interval: tuple[float, float]
    se: float
    tau2: float
    q: float
    i2: float
    effect_sizes: np.ndarray = field(repr=False)
    variances: np.ndarray = field(repr=False)
    quantiles: dict[float, float]
    alternative: str
    confidence_level: float

    @property
    def n_draws(self) -> int:
        return len(self.effect_sizes)


def draw_effect_sizes(
    sets: Sequence[Sequence[np.ndarray]],
    plan: np.ndarray,
    *,
    device: str | torch.device = "auto",
    method: str = "auto",
) -> tuple[np.ndarray, np.ndarray]:
    """ES_i and V_i of every draw of ``plan`` (module docstring).

    Args:
        sets: X, Y, A, B: per word, its context vectors ``(c_w, d)``.
        plan: ``(N, m)`` context index of each of the m words (X, Y, A, B in order) per draw.
        device: where the blocks run.
        method: ``table``, ``vectors`` or ``auto`` (the cheaper by :func:`choose_method`); the
            same numbers up to rounding.

    Raises:
        DataError: a zero vector, or a draw whose association scores are all equal (V_i = 0).
    """
    words = [np.asarray(v, dtype=np.float64) for s in sets for v in s]
    sizes = [len(s) for s in sets]
    if len(sets) != 4 or min(sizes) < 1 or sizes[0] + sizes[1] < 3:
        raise WeatkitError("CEAT needs words in X, Y, A and B (and three or more in X and Y)")
    if plan.ndim != 2 or plan.shape[1] != len(words):
        raise WeatkitError(f"the plan has {plan.shape[-1]} words, the sets {len(words)}")
    if method == "auto":
        method = choose_method(sizes, [len(v) for v in words], len(plan), words[0].shape[1])
    if method not in METHODS:
        raise WeatkitError(f"unknown method {method!r}: choose auto, {', '.join(METHODS)}")
    dev = resolve_device(device)
    n_x, n_t = sizes[0], sizes[0] + sizes[1]
    with torch.inference_mode(), cpu_threads(dev):
        units = [_unit(v, dev) for v in words]
        scores = _by_table if method == "table" else _by_vectors
        es, var = [], []
        for s in scores(units, plan, sizes, dev):  # (b, n_x + n_y) per block
            sd = s.std(dim=1, correction=1)
            es.append((s[:, :n_x].mean(1) - s[:, n_x:n_t].mean(1)) / sd)
            var.append(sd**2)
        effect_sizes = torch.cat(es).cpu().numpy().astype(np.float64)
        variances = torch.cat(var).cpu().numpy().astype(np.float64)
    if not (variances > 0).all():
        first = int(np.flatnonzero(~(variances > 0))[0])
        raise DataError(
            f"draw {first}: every target word has the same association score (variance 0)"
        )
    return effect_sizes, variances


#: How the association scores of the draws are computed (:func:`choose_method`).
METHODS = ("table", "vectors")
#: Entries of the largest similarity table the ``table`` method builds.
TABLE_ENTRIES = 32 * 2**20
#: How many times faster a matrix product is per element than a gather (measured on a CPU).
_PRODUCT_SPEEDUP = 30


def choose_method(sizes: Sequence[int], counts: Sequence[int], n_draws: int, dim: int) -> str:
    """``table`` (the similarity table of every target context with every attribute context,
    built once by one matrix product, then n_draws · (n_x + n_y) · (n_a + n_b) entries
    gathered) when it fits in :data:`TABLE_ENTRIES` and costs less than ``vectors`` (the drawn
    vectors gathered, n_draws · m · d values), which needs no table whatever the contexts."""
    n_t = sizes[0] + sizes[1]
    ctx_t, ctx_ab = sum(counts[:n_t]), sum(counts[n_t:])
    table = ctx_t * ctx_ab * dim / _PRODUCT_SPEEDUP + n_draws * n_t * (len(counts) - n_t)
    fits = ctx_t * ctx_ab <= TABLE_ENTRIES
    return "table" if fits and table < n_draws * len(counts) * dim else "vectors"


def _unit(vectors: np.ndarray, dev: torch.device) -> torch.Tensor:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    if (norms == 0).any():
        raise DataError("a context vector is all zeros: its cosine similarity is undefined")
    return torch.as_tensor(vectors / norms, dtype=engine_dtype(dev), device=dev)


def _rows(units: Sequence[torch.Tensor], plan: np.ndarray, dev: torch.device) -> torch.Tensor:
    """The plan as rows of the words' stacked context vectors."""
    offsets = np.cumsum([0, *(len(u) for u in units[:-1])])
    return torch.as_tensor(plan + offsets, device=dev)


def _by_vectors(
    units: Sequence[torch.Tensor], plan: np.ndarray, sizes: Sequence[int], dev: torch.device
) -> Iterator[torch.Tensor]:
    """s_i(w) = u_w · (ū_A,i − ū_B,i) from the drawn vectors, block by block."""
    n_t, n_a = sizes[0] + sizes[1], sizes[2]
    stacked = torch.cat(list(units))
    rows = _rows(units, plan, dev)
    block = max(1, BLOCK_BYTES // (8 * len(units) * stacked.shape[1]))
    for lo in range(0, len(plan), block):
        drawn = stacked[rows[lo : lo + block]]  # (b, m, d)
        direction = drawn[:, n_t : n_t + n_a].mean(1) - drawn[:, n_t + n_a :].mean(1)
        yield torch.einsum("bwd,bd->bw", drawn[:, :n_t], direction)


def _by_table(
    units: Sequence[torch.Tensor], plan: np.ndarray, sizes: Sequence[int], dev: torch.device
) -> Iterator[torch.Tensor]:
    """s_i(w) = mean_a S[w, a] − mean_b S[w, b] gathered from S = U_T U_AB^T, block by block."""
    n_t, n_a = sizes[0] + sizes[1], sizes[2]
    targets, attributes = torch.cat(list(units[:n_t])), torch.cat(list(units[n_t:]))
    table = targets @ attributes.T
    rows = _rows(units[:n_t], plan[:, :n_t], dev)
    cols = _rows(units[n_t:], plan[:, n_t:], dev)
    width = table.shape[1]
    block = max(1, BLOCK_BYTES // (16 * n_t * cols.shape[1]))
    for lo in range(0, len(plan), block):
        flat = rows[lo : lo + block, :, None] * width + cols[lo : lo + block, None, :]
        sims = torch.take(table, flat)  # (b, n_t, n_a + n_b)
        yield sims[:, :, :n_a].mean(2) - sims[:, :, n_a:].mean(2)


def combine(
    effect_sizes: np.ndarray,
    variances: np.ndarray,
    *,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
) -> CeatResult:
    """CES, its p-value and interval from the draws (module docstring)."""
    from scipy.special import ndtr

    if alternative not in ALTERNATIVES:
        raise WeatkitError(f"unknown alternative {alternative!r}: choose {', '.join(ALTERNATIVES)}")
    pooled = random_effects(effect_sizes, variances, confidence_level)
    z = pooled.estimate / pooled.se
    p = {
        "two-sided": 2 * ndtr(-abs(z)),
        "greater": ndtr(-z),
        "less": ndtr(z),
    }[alternative]
    return CeatResult(
        statistic=pooled.estimate,
        pvalue=float(p),
        confidence_interval=pooled.confidence_interval,
        se=pooled.se,
        tau2=pooled.tau2,
        q=pooled.q,
        i2=pooled.i2,
        effect_sizes=effect_sizes,
        variances=variances,
        quantiles={q: float(np.quantile(effect_sizes, q)) for q in QUANTILES},
        alternative=alternative,
        confidence_level=confidence_level,
    )


def ceat_test(
    sets: Sequence[Sequence[np.ndarray]],
    *,
    n_draws: int = 10_000,
    seed: int = 0,
    alternative: str = "two-sided",
    confidence_level: float = 0.95,
    device: str | torch.device = "auto",
    method: str = "auto",
) -> CeatResult:
    """CEAT of one test: ``sets`` = X, Y, A, B, each a list of per-word context vectors
    ``(c_w, d)``; N = ``n_draws`` draws from ``seed`` (module docstring).

    Example:
        >>> rng = np.random.default_rng(0)
        >>> sets = [[rng.normal(size=(3, 5)) + (i < 2) * (i == j) for j in range(4)]
        ...         for i in range(4)]
        >>> r = ceat_test(sets, n_draws=200, device="cpu")
        >>> r.n_draws, bool(0 <= r.pvalue <= 1)
        (200, True)
    """
    counts = [len(v) for s in sets for v in s]
    plan = context_draws(counts, n_draws, seed=seed)
    es, var = draw_effect_sizes(sets, plan, device=device, method=method)
    return combine(es, var, alternative=alternative, confidence_level=confidence_level)
