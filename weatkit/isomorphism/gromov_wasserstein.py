"""Gromov–Wasserstein (GW) distance between two embedding spaces.

Mémoli (2011), *Gromov–Wasserstein distances and the metric approach to object matching*; for
embedding spaces, Alvarez-Melis & Jaakkola (2018), *Gromov-Wasserstein Alignment of Word
Embedding Spaces*, EMNLP. With intra-space distance matrices ``C¹`` (``n₁ × n₁``) and ``C²``
(``n₂ × n₂``), uniform weights ``p = 1/n₁``, ``q = 1/n₂`` and the square loss::

    GW = min_{T ∈ Π(p, q)} Σ_{i,j,k,l} (C¹_ik − C²_jl)² T_ij T_kl

where ``Π(p, q)`` is the set of couplings (non-negative, row sums ``p``, column sums ``q``). The
problem is non-convex; POT's ``ot.gromov.gromov_wasserstein2`` (conditional gradient from the
product coupling ``p qᵀ``, Peyré, Cuturi & Solomon 2016, eq. 6) returns the loss of the local
optimum it reaches, deterministically.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from weatkit.isomorphism.gromov_hausdorff import cosine_distance_matrix
from weatkit.isomorphism.preprocess import check_matrix


@dataclass(frozen=True)
class GromovWassersteinResult:
    """GW and the sizes it compared.

    Attributes:
        value: the square-loss GW objective at POT's solution (0 for isometric spaces).
        n_src: rows of the source space.
        n_tgt: rows of the target space.
    """

    value: float
    n_src: int
    n_tgt: int


def gromov_wasserstein(
    X: np.ndarray, Y: np.ndarray, *, device: str | torch.device = "auto"
) -> GromovWassersteinResult:
    """``GW = min_T Σ_{i,j,k,l} (C¹_ik − C²_jl)² T_ij T_kl`` between the two spaces.

    ``C¹``, ``C²``: :func:`~weatkit.isomorphism.gromov_hausdorff.cosine_distance_matrix` of ``X``
    and ``Y`` (``sqrt(2 − 2 x·y)``); uniform weights; ``ot.gromov.gromov_wasserstein2(C1, C2, p,
    q, loss_fun="square_loss")`` with POT's numpy backend in float64 and its default
    (product-coupling) initialisation, so the result is deterministic. Memory and time grow as
    ``n²`` per iteration; a few thousand rows is practical.

    Args:
        X, Y: ``(n₁, d₁)``, ``(n₂, d₂)`` arrays (normalised, cut); sizes and dimensions may differ.
        device: torch device spec for the distance matrices (the solver runs on the CPU).
    """
    import ot

    mats = []
    for what, M in (("source", X), ("target", Y)):
        arr = check_matrix(M, f"gromov_wasserstein {what}", min_rows=1)
        mats.append(cosine_distance_matrix(arr, device=device))
    C1, C2 = mats
    p = np.full(C1.shape[0], 1.0 / C1.shape[0])
    q = np.full(C2.shape[0], 1.0 / C2.shape[0])
    value = ot.gromov.gromov_wasserstein2(C1, C2, p, q, loss_fun="square_loss")
    return GromovWassersteinResult(value=float(value), n_src=C1.shape[0], n_tgt=C2.shape[0])


__all__ = ["GromovWassersteinResult", "gromov_wasserstein"]
