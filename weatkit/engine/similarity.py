"""Similarity between target and attribute vectors, computed once per test.

Three measures, as in the CA-WEAT reference code (``caweat.py``, adapted from XWEAT):

* ``cosine``: cos(a, b) = a·b / (‖a‖ ‖b‖) (Caliskan et al. 2017).
* ``euclidean``: 1 / (1 + ‖â − b̂‖) on unit-normalised vectors â = a/‖a‖.
* ``csls``: cross-domain similarity local scaling (Conneau et al. 2018),
  CSLS(a, b) = 2 cos(a, b) − r(a) − r(b), where r(w) is the mean cosine of w to its k nearest
  neighbours (k = 10, itself excluded) among the distinct words of the test.

All functions work on a batch of tests of equal shape: ``(T, n, dim)`` tensors.
"""

from __future__ import annotations

import torch

from weatkit.errors import WeatkitError

METRICS = ("cosine", "euclidean", "csls")


def unit_rows(v: torch.Tensor) -> torch.Tensor:
    """v / ‖v‖ along the last axis."""
    return v / torch.linalg.vector_norm(v, dim=-1, keepdim=True)


def similarity_matrix(
    targets: torch.Tensor, attributes: torch.Tensor, metric: str = "cosine", csls_k: int = 10
) -> torch.Tensor:
    """Similarities between every target and every attribute of each test.

    Args:
        targets: ``(T, n_t, dim)``, the rows of X followed by those of Y.
        attributes: ``(T, n_a, dim)``, the rows of A followed by those of B.
        metric: ``cosine``, ``euclidean`` or ``csls``.
        csls_k: neighbourhood size for CSLS.

    Returns:
        ``(T, n_t, n_a)`` similarity matrices.
    """
    t, a = unit_rows(targets), unit_rows(attributes)
    if metric == "cosine":
        return t @ a.transpose(1, 2)
    if metric == "euclidean":
        return 1.0 / (1.0 + torch.cdist(t, a, compute_mode="donot_use_mm_for_euclid_dist"))
    if metric == "csls":
        r = _csls_local_scale(torch.cat([t, a], dim=1), csls_k)
        r_t, r_a = r[:, : t.shape[1]], r[:, t.shape[1] :]
        return 2.0 * (t @ a.transpose(1, 2)) - r_t[:, :, None] - r_a[:, None, :]
    raise WeatkitError(f"unknown similarity {metric!r}: choose one of {', '.join(METRICS)}")


def _csls_local_scale(unit_rows: torch.Tensor, k: int) -> torch.Tensor:
    """r(w): mean cosine to the k nearest distinct other words of the same test, ``(T, n)``.

    Words that occur in several sets share one row in the reference code's vocabulary, so
    repeated rows are counted once as neighbours. When fewer than k other words exist, all of
    them are used (as the reference's ``sort(...)[:, -k-1:-1]`` does).
    """
    sims = unit_rows @ unit_rows.transpose(1, 2)
    n = sims.shape[-1]
    same = torch.cdist(unit_rows, unit_rows, compute_mode="donot_use_mm_for_euclid_dist") == 0
    earlier = torch.ones(n, n, dtype=torch.bool, device=sims.device).tril(-1)
    duplicate_col = (same & earlier).any(dim=-1)  # row j repeats an earlier row
    excluded = same | duplicate_col[:, None, :]  # self, copies of self, repeated columns
    sims = sims.masked_fill(excluded, float("-inf"))
    n_other = (~excluded).sum(dim=-1)  # (T, n)
    kk = min(k, n - 1)
    top = sims.topk(kk, dim=-1).values  # (T, n, kk), -inf where too few neighbours
    use = torch.arange(kk, device=sims.device) < n_other.clamp(max=k)[..., None]
    total = torch.where(use, top, torch.zeros_like(top)).sum(dim=-1)
    return total / n_other.clamp(min=1, max=k)
