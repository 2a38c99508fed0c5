"""Eigenvector similarity (EV) of two embedding spaces: Laplacian spectra of 1-NN graphs.

Søgaard, Ruder & Vulić (2018), *On the Limitations of Unsupervised Bilingual Dictionary
Induction*, ACL, §4.2: build the nearest-neighbour graph of each space, take the Laplacian
eigenvalues, choose ``k`` so that the eigenvalues kept hold 90% of the spectrum's sum, and sum the
squared differences. The numbers follow the reference script of the iso-study (Vulić et al.
2020, cambridgeltl/iso-study ``scripts/evs_script.py``), which the CA-WEAT paper §5 uses:

* graph: ``NearestNeighbors(n_neighbors=2)`` on the first ``FREQ = 10000`` preprocessed rows
  (Euclidean); for every row ``i`` the undirected edge ``(i, nn(i))`` goes into a
  ``networkx.Graph`` (a mutual pair collapses to one edge);
* ``networkx.laplacian_spectrum(G)``: eigenvalues of ``L = D − A``, ascending;
* ``select_k``: the smallest ``k`` with ``Σ_{i<k} λ_i / Σ_i λ_i ≥ 0.9``; ``k = min(k₁, k₂)``;
* ``EV = Σ_{i<k} (λ¹_i − λ²_i)²``.

Note that the script therefore compares the *smallest* eigenvalues (a 1-NN graph has one zero
eigenvalue per connected component), whereas Søgaard et al. describe the ``k`` largest;
``order="descending"`` gives the latter.

Speed: the 1-NN graph is a forest of small components (each a tree closed by one mutual pair),
so the spectrum is the union of the components' spectra, computed with batched ``eigvalsh`` by
component size instead of one dense ``n × n`` eigendecomposition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
import torch

from weatkit.errors import WeatkitError
from weatkit.isomorphism.preprocess import check_matrix, float64_device

if TYPE_CHECKING:  # imported when used: scipy.sparse is slow, and a run measures no EV
    import scipy.sparse

#: Candidates per row refined with exact differences before the nearest one is chosen.
_CANDIDATES = 8
#: Bytes of float64 distances per chunk of rows.
_CHUNK_BYTES = 1 << 27

ORDERS = ("ascending", "descending")


@dataclass(frozen=True)
class EigenvectorResult:
    """EV and the ``k`` it used.

    Attributes:
        value: ``Σ_{i<k} (λ¹_i − λ²_i)²`` (0 for isomorphic graphs; larger = less similar).
        k: ``min(k_src, k_tgt)``.
        k_src: :func:`select_k` of the source spectrum.
        k_tgt: :func:`select_k` of the target spectrum.
        order: ``"ascending"`` (reference script) or ``"descending"`` (largest eigenvalues).
    """

    value: float
    k: int
    k_src: int
    k_tgt: int
    order: str


def _nearest_other(X: np.ndarray, device: torch.device) -> np.ndarray:
    """Index of each row's nearest other row (Euclidean), ties → lowest index; exact.

    Candidates come from ``‖a−b‖² = ‖a‖² + ‖b‖² − 2 a·b`` (one matrix product per chunk of rows),
    then the best ``_CANDIDATES`` are re-scored with ``Σ (a−b)²`` computed directly, which is
    exact up to rounding and gives bit-identical values for identical rows. When the expansion
    cannot separate the candidates from the rest (near-ties beyond the candidate set), the row is
    re-scored against all rows directly.
    """
    n, dim = X.shape
    xt = torch.from_numpy(np.ascontiguousarray(X)).to(device=device, dtype=torch.float64)
    sq = (xt * xt).sum(dim=1)
    m = min(_CANDIDATES, n - 1)
    # rounding bound of the expansion, per row: a few ulps of the magnitudes involved
    slack = 8.0 * (dim + 2) * torch.finfo(torch.float64).eps * (sq + sq.max())
    chunk = max(1, min(n, _CHUNK_BYTES // (8 * n)))
    out = torch.empty(n, dtype=torch.int64, device=device)
    for start in range(0, n, chunk):
        stop = min(n, start + chunk)
        rows = torch.arange(start, stop, device=device)
        d2 = sq[start:stop, None] + sq[None, :] - 2.0 * (xt[start:stop] @ xt.T)
        d2[rows - start, rows] = torch.inf
        approx, cand = torch.topk(d2, m, dim=1, largest=False, sorted=True)
        exact = ((xt[start:stop, None, :] - xt[cand]) ** 2).sum(dim=2)
        best = exact.min(dim=1, keepdim=True).values
        pick = torch.where(exact == best, cand, torch.full_like(cand, n)).min(dim=1).values
        # candidates are conclusive when the last one is clearly worse than the first, or when
        # every other row is a candidate
        unsure = (approx[:, -1] - approx[:, 0] <= 2.0 * slack[start:stop]) & (m < n - 1)
        for local in torch.nonzero(unsure).flatten().tolist():
            i = start + local
            full = ((xt - xt[i]) ** 2).sum(dim=1)
            full[i] = torch.inf
            low = full.min()
            pick[local] = torch.nonzero(full == low)[0, 0]
        out[start:stop] = pick
    return out.cpu().numpy()


def knn_graph(X: np.ndarray, *, device: str | torch.device = "auto") -> scipy.sparse.csr_matrix:
    """Symmetric 0/1 adjacency of the undirected 1-nearest-neighbour graph of the rows of ``X``.

    ``A_ij = 1`` iff ``j = nn(i)`` or ``i = nn(j)``, where ``nn(i) = argmin_{j≠i} ‖x_i − x_j‖₂``
    (ties → lowest index). This is the graph of cambridgeltl/iso-study ``evs_script.py``
    (``NearestNeighbors(n_neighbors=2)``, then ``G.add_edge(i, nn(i))`` for every row). The
    neighbours are exact: chunked torch matrix products in float64 on ``device``, then the best
    candidates are re-scored directly (see ``_nearest_other``).

    One difference from the script: with *duplicate* rows, sklearn may return a duplicate instead
    of the row itself as the first neighbour, which can drop a node from the script's graph;
    here every row always links to its nearest other row.

    Args:
        X: ``(n, d)`` array, ``n ≥ 2``.
        device: torch device spec (``auto`` → CUDA when available).

    Returns:
        ``(n, n)`` float64 CSR matrix, symmetric, 0/1, no self loops.
    """
    import scipy.sparse

    arr = check_matrix(X, "knn_graph", min_rows=2)
    n = arr.shape[0]
    nn = _nearest_other(arr, float64_device(device))
    rows = np.concatenate([np.arange(n), nn])
    cols = np.concatenate([nn, np.arange(n)])
    adj = scipy.sparse.csr_matrix((np.ones(2 * n), (rows, cols)), shape=(n, n))
    adj.sum_duplicates()
    adj.data[:] = 1.0
    return adj


def _as_adjacency(adjacency: object) -> scipy.sparse.csr_matrix:
    import scipy.sparse

    if scipy.sparse.issparse(adjacency):
        adj = scipy.sparse.csr_matrix(adjacency, dtype=np.float64)
    else:
        try:
            dense = np.asarray(adjacency, dtype=np.float64)
        except (TypeError, ValueError) as err:
            raise WeatkitError(f"laplacian_spectrum: not a matrix ({err})") from err
        if dense.ndim != 2:
            raise WeatkitError(f"laplacian_spectrum: expected a square matrix, got {dense.shape}")
        adj = scipy.sparse.csr_matrix(dense)
    if adj.shape[0] != adj.shape[1]:
        raise WeatkitError(f"laplacian_spectrum: expected a square matrix, got {adj.shape}")
    adj.sum_duplicates()
    adj.eliminate_zeros()
    if not np.isfinite(adj.data).all():
        raise WeatkitError("laplacian_spectrum: the adjacency has NaN or infinite weights")
    if (adj != adj.T).nnz:
        raise WeatkitError("laplacian_spectrum: the adjacency is not symmetric")
    return adj


def laplacian_spectrum(adjacency: scipy.sparse.spmatrix | np.ndarray) -> np.ndarray:
    """Eigenvalues of the graph Laplacian ``L = D − A``, ascending (``D = diag(Σ_j A_ij)``).

    Same values as ``networkx.laplacian_spectrum`` (dense ``eigvalsh`` of the whole ``L``), used
    by cambridgeltl/iso-study ``evs_script.py``. ``L`` is block diagonal over the connected
    components (``scipy.sparse.csgraph.connected_components``), so its spectrum is the union of
    the blocks' spectra; blocks of equal size are stacked and solved by one batched
    ``numpy.linalg.eigvalsh``. Self loops cancel in ``D − A``, as in networkx. Every node counts,
    isolated ones too (eigenvalue 0).

    Args:
        adjacency: symmetric ``(n, n)`` matrix (scipy sparse or dense), weights allowed.

    Returns:
        ``(n,)`` float64 array, ascending.
    """
    from scipy.sparse.csgraph import connected_components

    adj = _as_adjacency(adjacency)
    n = adj.shape[0]
    if n == 0:
        return np.zeros(0)
    n_comp, labels = connected_components(adj, directed=False)
    sizes = np.bincount(labels, minlength=n_comp)
    order = np.argsort(labels, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    pos = np.empty(n, dtype=np.int64)
    pos[order] = np.arange(n) - starts[labels[order]]
    degree = np.asarray(adj.sum(axis=1)).ravel()
    coo = adj.tocoo()
    edge_comp = labels[coo.row]
    comp_size = sizes[labels]
    values = []
    for size in np.unique(sizes):
        comps = np.flatnonzero(sizes == size)
        slot = np.full(n_comp, -1, dtype=np.int64)
        slot[comps] = np.arange(comps.size)
        blocks = np.zeros((comps.size, size, size))
        nodes = np.flatnonzero(comp_size == size)
        blocks[slot[labels[nodes]], pos[nodes], pos[nodes]] = degree[nodes]
        edges = np.flatnonzero(sizes[edge_comp] == size)
        # coordinates are unique after sum_duplicates, so plain assignment is safe
        r, c = coo.row[edges], coo.col[edges]
        blocks[slot[edge_comp[edges]], pos[r], pos[c]] -= coo.data[edges]
        values.append(np.linalg.eigvalsh(blocks).ravel())
    return np.sort(np.concatenate(values))


def select_k(spectrum: np.ndarray, energy: float = 0.9) -> int:
    """Smallest ``k`` with ``Σ_{i<k} s_i / Σ_i s_i ≥ energy`` (in the order given).

    cambridgeltl/iso-study ``evs_script.py`` ``select_k``: a running total over the spectrum in
    its order; if the total is 0 the answer is ``len(spectrum)``; if the threshold is never
    reached (rounding), also ``len(spectrum)``.

    Args:
        spectrum: 1-d array of eigenvalues.
        energy: fraction in ``(0, 1]``.
    """
    values = np.asarray(spectrum, dtype=np.float64)
    if values.ndim != 1:
        raise WeatkitError(f"select_k: expected a 1-d spectrum, got shape {values.shape}")
    if not 0.0 < energy <= 1.0:
        raise WeatkitError(f"select_k: energy must be in (0, 1], got {energy}")
    running = np.cumsum(values)
    total = running[-1] if values.size else 0.0
    if total == 0.0:
        return int(values.size)
    reached = np.flatnonzero(running / total >= energy)
    return int(reached[0]) + 1 if reached.size else int(values.size)


def eigenvector_similarity(
    X: np.ndarray,
    Y: np.ndarray,
    *,
    order: str = "ascending",
    energy: float = 0.9,
    device: str | torch.device = "auto",
) -> EigenvectorResult:
    """EV between two spaces: ``Σ_{i<k} (λ¹_i − λ²_i)²`` over 1-NN graph Laplacian spectra.

    ``λ¹``, ``λ²``: :func:`laplacian_spectrum` of :func:`knn_graph` of ``X`` and ``Y``, sorted in
    ``order``; ``k = min(select_k(λ¹, energy), select_k(λ², energy))``. Søgaard et al. (2018)
    §4.2; cambridgeltl/iso-study ``evs_script.py`` (``order="ascending"``, ``energy=0.9``, rows =
    the 10,000 most frequent words after :func:`~weatkit.isomorphism.preprocess.normalize_space`).

    Args:
        X, Y: ``(n₁, d₁)`` and ``(n₂, d₂)`` arrays, already normalised and cut to the words to use;
            sizes and dimensions may differ (``k`` can not exceed the smaller size).
        order: ``"ascending"`` (reference script: smallest eigenvalues) or ``"descending"``
            (Søgaard et al.'s description: largest eigenvalues).
        energy: :func:`select_k` threshold.
        device: torch device spec for the nearest neighbours.
    """
    if order not in ORDERS:
        raise WeatkitError(f"eigenvector_similarity: order must be one of {ORDERS}, got {order!r}")
    spectra = []
    for what, M in (("source", X), ("target", Y)):
        arr = check_matrix(M, f"eigenvector_similarity {what}", min_rows=2)
        spectrum = laplacian_spectrum(knn_graph(arr, device=device))
        spectra.append(spectrum[::-1] if order == "descending" else spectrum)
    k_src = select_k(spectra[0], energy)
    k_tgt = select_k(spectra[1], energy)
    k = min(k_src, k_tgt)
    value = float(np.sum((spectra[0][:k] - spectra[1][:k]) ** 2))
    return EigenvectorResult(value=value, k=k, k_src=k_src, k_tgt=k_tgt, order=order)


__all__ = [
    "ORDERS",
    "EigenvectorResult",
    "eigenvector_similarity",
    "knn_graph",
    "laplacian_spectrum",
    "select_k",
]
