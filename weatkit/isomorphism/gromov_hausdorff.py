"""Gromov–Hausdorff (GH) proxy between two spaces: bottleneck distance of Rips persistence diagrams.

Patra et al. (2019), *Bilingual Lexicon Induction with Semi-supervision in Non-Isometric
Embedding Spaces*, ACL, §3: the Gromov–Hausdorff distance of two metric spaces is bounded below
by the bottleneck distance between the persistence diagrams of their Vietoris–Rips filtrations
(Chazal et al. 2009), and that bound is what is computed. The numbers follow the reference
script of the iso-study (Vulić et al. 2020, cambridgeltl/iso-study ``scripts/gh_script.py``),
which the CA-WEAT paper §5 uses:

* ``D = sqrt(2 − 2·clamp(X Xᵀ, −1, 1))`` on the first ``FREQ = 5000`` preprocessed rows (the
  Euclidean distance between unit vectors);
* Rips filtration of ``D`` (gudhi ``RipsComplex(...).create_simplex_tree(max_dimension=1)``),
  persistence in dimension 0 only (``HOMO_DIM = 1`` → ``range(1)``);
* ``gudhi.bottleneck_distance(diag_x, diag_y, e=0)``, the minimum over dimensions.

Speed: the finite H0 bars of a Rips filtration are ``(0, w)`` for the edge lengths ``w`` of a
minimum spanning tree of ``D`` (single linkage), so no simplex tree is needed; and because every
H0 point has birth 0, their exact bottleneck distance reduces to a one-dimensional matching
problem (see :func:`bottleneck_distance`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from weatkit.errors import WeatkitError
from weatkit.isomorphism.preprocess import check_matrix, float64_device

POINTS = ("distances", "distance-rows")


@dataclass(frozen=True)
class GromovHausdorffResult:
    """GH and its parts.

    Attributes:
        value: ``min_d`` of the per-dimension bottleneck distances (the reference's ``min``).
        per_dim: homology dimension → bottleneck distance between the two ``H_d`` diagrams.
        n_src: rows of the source space.
        n_tgt: rows of the target space.
    """

    value: float
    per_dim: dict[int, float]
    n_src: int
    n_tgt: int


def _finish_distances(sq_dist: torch.Tensor) -> np.ndarray:
    """``sqrt(max(0, (S + Sᵀ)/2))`` with a zero diagonal, as float64 numpy (``S`` is consumed)."""
    sym = sq_dist + sq_dist.T
    del sq_dist
    sym.mul_(0.5).clamp_(min=0.0).sqrt_()
    sym.fill_diagonal_(0.0)
    return sym.cpu().numpy()


def cosine_distance_matrix(X: np.ndarray, *, device: str | torch.device = "auto") -> np.ndarray:
    """``D_ij = sqrt(2 − 2·clamp(x_i·x_j, −1, 1))``: Euclidean distance of unit rows, float64.

    cambridgeltl/iso-study ``gh_script.py`` ``distance_matrix`` (there in float32). The Gram matrix
    is symmetrised (``(G + Gᵀ)/2``) so that ``D`` is exactly symmetric, and the diagonal is set to
    exact zeros. Meaningful for unit-norm rows (see
    :func:`~weatkit.isomorphism.preprocess.normalize_space`).

    Args:
        X: ``(n, d)`` array.
        device: torch device spec for the product.

    Returns:
        ``(n, n)`` float64 array.
    """
    arr = check_matrix(X, "cosine_distance_matrix")
    xt = torch.from_numpy(np.ascontiguousarray(arr)).to(float64_device(device))
    sq_dist = (xt @ xt.T).clamp_(-1.0, 1.0).mul_(-2.0).add_(2.0)
    return _finish_distances(sq_dist)


def _row_distance_matrix(D: np.ndarray, device: torch.device) -> np.ndarray:
    """Euclidean distances between the rows of ``D`` taken as points of ``R^n``."""
    dt = torch.from_numpy(np.ascontiguousarray(D)).to(device)
    sq = (dt * dt).sum(dim=1)
    sq_dist = (dt @ dt.T).mul_(-2.0).add_(sq[:, None]).add_(sq[None, :])
    return _finish_distances(sq_dist)


def _check_distance_matrix(D: object, what: str) -> np.ndarray:
    arr = check_matrix(D, what)
    if arr.shape[0] != arr.shape[1]:
        raise WeatkitError(f"{what}: expected a square distance matrix, got shape {arr.shape}")
    if (arr < 0).any():
        raise WeatkitError(f"{what}: the distance matrix has negative entries")
    block = 64  # compare row blocks with column blocks: cache-friendly, no n × n temporary
    for i in range(0, arr.shape[0], block):
        rows, cols = arr[i : i + block, :], arr[:, i : i + block].T
        if not np.array_equal(rows, cols) and not np.allclose(rows, cols, rtol=0.0, atol=1e-12):
            raise WeatkitError(f"{what}: the distance matrix is not symmetric")
    return arr


def _mst_lengths(D: np.ndarray) -> np.ndarray:
    """Edge lengths of a minimum spanning tree of the complete graph on ``D`` (dense Prim).

    ``O(n²)`` with one vectorised row update per added vertex. Every length is an entry of ``D``
    (no arithmetic), and the multiset of MST edge lengths is the same for every MST, so the result
    is exact; zero distances are ordinary edges (unlike ``scipy``'s sparse convention).
    """
    D = np.ascontiguousarray(D)  # one row per step
    n = D.shape[0]
    lengths = np.empty(max(n - 1, 0))
    if n < 2:
        return lengths
    in_tree = np.zeros(n, dtype=bool)
    in_tree[0] = True
    best = D[0].copy()
    best[0] = np.inf
    for step in range(n - 1):
        j = int(np.argmin(best))
        lengths[step] = best[j]
        in_tree[j] = True
        np.minimum(best, D[j], out=best)
        best[in_tree] = np.inf
    return lengths


def h0_diagram(D: np.ndarray) -> np.ndarray:
    """Finite H0 persistence diagram of the Vietoris–Rips filtration of distance matrix ``D``.

    Every vertex is born at 0; two components merge at the length of the edge that joins them
    first, so the finite bars are ``(0, w)`` for the ``n − 1`` edge lengths ``w`` of a minimum
    spanning tree of ``D`` (single-linkage clustering; e.g. Edelsbrunner & Harer 2010, §VII). The
    MST is computed by a dense Prim's algorithm (exact: the lengths are entries of ``D``).

    Bars of length 0 (duplicate points, ``D_ij = 0``) are left out, as gudhi's ``persistence()``
    does: they lie on the diagonal and do not change a bottleneck distance. The essential class
    ``(0, ∞)`` is left out too (each space has exactly one, and they match at cost 0).

    Args:
        D: ``(n, n)`` symmetric non-negative distance matrix (the diagonal is ignored).

    Returns:
        ``(m, 2)`` float64 array of ``(0, death)``, deaths ascending, ``m ≤ n − 1``.
    """
    return _h0(_check_distance_matrix(D, "h0_diagram"))


def _h0(D: np.ndarray) -> np.ndarray:
    deaths = np.sort(_mst_lengths(D))
    deaths = deaths[deaths > 0.0]
    return np.column_stack([np.zeros_like(deaths), deaths])


def h1_diagram(D: np.ndarray) -> np.ndarray:
    """H1 persistence diagram of the Vietoris–Rips filtration of ``D`` (ripser).

    ``ripser(D, distance_matrix=True, maxdim=1)["dgms"][1]`` (ripser computes in float32, so the
    values carry float32 rounding). Cost grows quickly with ``n``; use it for small spaces.

    Returns:
        ``(m, 2)`` float64 array of ``(birth, death)``.
    """
    arr = _check_distance_matrix(D, "h1_diagram")
    return _ripser_diagrams(arr, 1)[1]


def _ripser_diagrams(D: np.ndarray, maxdim: int) -> list[np.ndarray]:
    from ripser import ripser

    dgms = ripser(D, distance_matrix=True, maxdim=maxdim)["dgms"]
    return [np.asarray(d, dtype=np.float64).reshape(-1, 2) for d in dgms]


def _covers(must: np.ndarray, other: np.ndarray, delta: float) -> bool:
    """Can every value of ``must`` be matched to a distinct value ``b`` of ``other`` with
    ``fl(|a − b|) ≤ delta``? (Both sorted ascending.)

    For sorted ``a``, the admissible ``b`` form an index interval ``[lo(a), hi(a))`` whose ends
    never decrease (``fl(a − b)`` is monotone in both arguments), so the greedy "smallest free
    admissible ``b``" is optimal: ``j_k = max(j_{k−1} + 1, lo_k) = k + max_{m≤k}(lo_m − m)``.
    ``searchsorted`` gives the ends up to rounding; they are then corrected with the exact
    floating-point predicate.
    """
    if must.size == 0:
        return True
    if other.size < must.size:
        return False
    size = other.size
    lo = np.searchsorted(other, must - delta, side="left")
    while True:  # lo = #{b : fl(a − b) > delta}
        down = (lo > 0) & (must - other[np.maximum(lo - 1, 0)] <= delta)
        up = (lo < size) & (must - other[np.minimum(lo, size - 1)] > delta)
        if not (down.any() or up.any()):
            break
        lo = lo - down + up
    hi = np.searchsorted(other, must + delta, side="right")
    while True:  # hi = #{b : fl(b − a) ≤ delta} (b ≥ a side)
        down = (hi > 0) & (other[np.maximum(hi - 1, 0)] - must > delta)
        up = (hi < size) & (other[np.minimum(hi, size - 1)] - must <= delta)
        if not (down.any() or up.any()):
            break
        hi = hi - down + up
    k = np.arange(must.size)
    slot = k + np.maximum.accumulate(lo - k)
    return bool(np.all(slot < hi))


def _h0_bottleneck(a: np.ndarray, b: np.ndarray) -> float:
    """Exact bottleneck distance between diagrams whose points are all ``(0, death)``.

    With ``L∞`` costs, ``|(0,a) − (0,b)| = |a − b|`` and the distance of ``(0,a)`` to the diagonal
    is ``a/2``. A matching of cost ``≤ δ`` exists iff the points with ``a/2 > δ`` on each side can
    be matched into the other side with ``|a − b| ≤ δ`` (by Mendelsohn–Dulmage, covering each side
    separately suffices; the rest go to the diagonal). Feasibility is monotone in ``δ`` and only
    changes at a value ``fl(|a − b|)`` or ``a/2``, so bisection over the bit patterns of
    non-negative doubles returns exactly the smallest feasible candidate — the value gudhi's exact
    algorithm (``e=0``) returns.
    """
    a = np.sort(a)
    b = np.sort(b)

    def feasible(delta: float) -> bool:
        return _covers(a[a / 2 > delta], b, delta) and _covers(b[b / 2 > delta], a, delta)

    if feasible(0.0):
        return 0.0
    hi = float(max(a.max(initial=0.0), b.max(initial=0.0)) / 2)
    lo_bits = 0
    hi_bits = int(np.float64(hi).view(np.int64))
    while hi_bits - lo_bits > 1:
        mid = (lo_bits + hi_bits) // 2
        if feasible(float(np.int64(mid).view(np.float64))):
            hi_bits = mid
        else:
            lo_bits = mid
    return float(np.int64(hi_bits).view(np.float64))


def _as_diagram(diagram: object, what: str) -> np.ndarray:
    try:
        arr = np.asarray(diagram, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise WeatkitError(f"bottleneck_distance: {what} is not a diagram ({err})") from err
    if arr.size == 0:
        return np.zeros((0, 2))
    if arr.ndim != 2 or arr.shape[1] != 2:
        raise WeatkitError(f"bottleneck_distance: {what} must have shape (m, 2), got {arr.shape}")
    if np.isnan(arr).any():
        raise WeatkitError(f"bottleneck_distance: {what} has NaN values")
    return arr


def bottleneck_distance(diagram_a: np.ndarray, diagram_b: np.ndarray) -> float:
    """Exact bottleneck distance ``d_B = min_γ sup_p ‖p − γ(p)‖_∞`` between two diagrams.

    ``γ`` ranges over bijections between the diagrams, each augmented with the diagonal
    (Cohen-Steiner, Edelsbrunner & Harer 2007). When every point has birth 0 and a finite death
    (H0 diagrams) an exact one-dimensional algorithm is used (``_h0_bottleneck``); otherwise
    ``gudhi.bottleneck_distance(a, b, e=0)`` (exact), as in cambridgeltl/iso-study
    ``gh_script.py``.
    """
    a = _as_diagram(diagram_a, "the first diagram")
    b = _as_diagram(diagram_b, "the second diagram")
    h0_like = all(
        np.all(d[:, 0] == 0.0) and np.isfinite(d[:, 1]).all() and np.all(d[:, 1] >= 0.0)
        for d in (a, b)
    )
    if h0_like:
        return _h0_bottleneck(a[:, 1], b[:, 1])
    import gudhi  # only needed off the H0 path

    return float(gudhi.bottleneck_distance(a, b, e=0))


def _check_dims(dims: tuple[int, ...]) -> tuple[int, ...]:
    try:
        out = tuple(int(d) for d in dims)
    except (TypeError, ValueError) as err:
        raise WeatkitError(f"gromov_hausdorff: dims must be integers, got {dims!r}") from err
    if not out or any(d < 0 for d in out) or any(int(d) != d for d in dims):
        raise WeatkitError(f"gromov_hausdorff: dims must be non-negative integers, got {dims!r}")
    return tuple(sorted(set(out)))


def _diagrams(D: np.ndarray, dims: tuple[int, ...]) -> dict[int, np.ndarray]:
    """Diagrams of a distance matrix this module built (already valid)."""
    out: dict[int, np.ndarray] = {}
    if 0 in dims:
        out[0] = _h0(D)
    higher = [d for d in dims if d > 0]
    if higher:
        dgms = _ripser_diagrams(D, max(higher))
        for d in higher:
            out[d] = dgms[d]
    return out


def gromov_hausdorff(
    X: np.ndarray,
    Y: np.ndarray,
    *,
    dims: tuple[int, ...] = (0,),
    points: str = "distances",
    device: str | torch.device = "auto",
) -> GromovHausdorffResult:
    """GH proxy: ``min_{d ∈ dims} d_B(Dgm_d(Rips(D_X)), Dgm_d(Rips(D_Y)))``.

    ``D_X``, ``D_Y``: :func:`cosine_distance_matrix`; ``Dgm_0``: :func:`h0_diagram`; ``Dgm_d`` for
    ``d ≥ 1``: ripser; ``d_B``: :func:`bottleneck_distance`. Patra et al. (2019) §3;
    cambridgeltl/iso-study ``gh_script.py`` (``dims=(0,)``, rows = the 5,000 most frequent words
    after :func:`~weatkit.isomorphism.preprocess.normalize_space`).

    ``points="distance-rows"`` reproduces a quirk of the reference script: it calls
    ``gudhi.RipsComplex(x)`` with the distance matrix as the first *positional* argument, which in
    gudhi < 3 was ``points``. The rows of ``D`` were then taken as points of ``R^n`` and the Rips
    complex was built on the Euclidean distances between rows, ``cdist(D, D)``, not on ``D``
    (gudhi ≥ 3 made ``points`` keyword-only). The default ``"distances"`` builds it on ``D``, as
    intended.

    Args:
        X, Y: ``(n₁, d₁)``, ``(n₂, d₂)`` arrays (normalised, cut); sizes and dimensions may differ.
        dims: homology dimensions to compare (``(0,)`` as the reference); ``d ≥ 1`` is costly.
        points: ``"distances"`` or ``"distance-rows"`` (see above).
        device: torch device spec for the distance matrices.
    """
    dim_list = _check_dims(dims)
    if points not in POINTS:
        raise WeatkitError(f"gromov_hausdorff: points must be one of {POINTS}, got {points!r}")
    torch_device = float64_device(device)
    diagrams = []
    sizes = []
    for what, M in (("source", X), ("target", Y)):
        arr = check_matrix(M, f"gromov_hausdorff {what}", min_rows=2)
        D = cosine_distance_matrix(arr, device=torch_device)
        if points == "distance-rows":
            D = _row_distance_matrix(D, torch_device)
        diagrams.append(_diagrams(D, dim_list))
        sizes.append(arr.shape[0])
    per_dim = {d: bottleneck_distance(diagrams[0][d], diagrams[1][d]) for d in dim_list}
    return GromovHausdorffResult(
        value=min(per_dim.values()), per_dim=per_dim, n_src=sizes[0], n_tgt=sizes[1]
    )


__all__ = [
    "POINTS",
    "GromovHausdorffResult",
    "bottleneck_distance",
    "cosine_distance_matrix",
    "gromov_hausdorff",
    "h0_diagram",
    "h1_diagram",
]
