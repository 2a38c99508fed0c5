"""Isomorphism measures (EV, GH, GW) against direct reference computations.

References: networkx ``laplacian_spectrum`` on a graph built as cambridgeltl/iso-study
``evs_script.py`` does; gudhi Rips persistence and bottleneck distance as ``gh_script.py`` does;
POT's GW coupling scored with the explicit four-index sum.
"""

from __future__ import annotations

import gudhi
import networkx as nx
import numpy as np
import ot
import pytest
import scipy.sparse
import torch
from scipy.spatial.distance import cdist
from scipy.stats import ortho_group

from weatkit.errors import WeatkitError
from weatkit.isomorphism.eigenvector import (
    eigenvector_similarity,
    knn_graph,
    laplacian_spectrum,
    select_k,
)
from weatkit.isomorphism.gromov_hausdorff import (
    bottleneck_distance,
    cosine_distance_matrix,
    gromov_hausdorff,
    h0_diagram,
    h1_diagram,
)
from weatkit.isomorphism.gromov_wasserstein import gromov_wasserstein
from weatkit.isomorphism.preprocess import normalize_space


def space(n: int, dim: int, seed: int) -> np.ndarray:
    return normalize_space(np.random.default_rng(seed).normal(size=(n, dim)))


def noisy(X: np.ndarray, scale: float, seed: int) -> np.ndarray:
    """Gaussian noise of expected norm ``≈ scale`` per row (unit rows), then renormalised."""
    noise = np.random.default_rng(seed).normal(size=X.shape) / np.sqrt(X.shape[1])
    return normalize_space(X + scale * noise)


# --- reference implementations, written out the slow obvious way -----------------------------


def brute_nearest(X: np.ndarray) -> np.ndarray:
    """Nearest other row by a double loop over exact squared differences, ties → lowest index."""
    out = []
    for i in range(len(X)):
        best, arg = np.inf, -1
        for j in range(len(X)):
            if j != i:
                d = float(np.sum((X[i] - X[j]) ** 2))
                if d < best:
                    best, arg = d, j
        out.append(arg)
    return np.array(out)


def reference_graph(X: np.ndarray) -> nx.Graph:
    """evs_script.py: ``G.add_edge(i, nn(i))`` for every row."""
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    G = nx.Graph()
    for i, j in enumerate(D.argmin(axis=1)):
        G.add_edge(i, int(j))
    return G


def reference_select_k(spectrum, minimum_energy=0.9):
    """evs_script.py ``select_k``, verbatim logic."""
    running_total = 0.0
    total = sum(spectrum)
    if total == 0.0:
        return len(spectrum)
    for i in range(len(spectrum)):
        running_total += spectrum[i]
        if running_total / total >= minimum_energy:
            return i + 1
    return len(spectrum)


def reference_ev(X: np.ndarray, Y: np.ndarray, order: str) -> tuple[float, int]:
    l1 = nx.laplacian_spectrum(reference_graph(X))
    l2 = nx.laplacian_spectrum(reference_graph(Y))
    if order == "descending":
        l1, l2 = l1[::-1], l2[::-1]
    k = min(reference_select_k(l1), reference_select_k(l2))
    return float(sum((l1[:k] - l2[:k]) ** 2)), k


def brute_bottleneck(a: np.ndarray, b: np.ndarray) -> float:
    """Bottleneck distance of H0 diagrams {(0, a_i)}, {(0, b_j)} by trying every candidate cost.

    Bipartite graph ``a ∪ diag(b)`` vs ``b ∪ diag(a)``; the answer is the smallest candidate
    cost with a perfect matching among the edges no more expensive.
    """
    from scipy.sparse.csgraph import maximum_bipartite_matching

    na, nb = len(a), len(b)
    cost = np.full((na + nb, na + nb), np.inf)
    cost[:na, :nb] = np.abs(a[:, None] - b[None, :])
    cost[np.arange(na), nb + np.arange(na)] = a / 2
    cost[na + np.arange(nb), np.arange(nb)] = b / 2
    cost[na:, nb:] = 0.0
    for c in np.unique(cost[np.isfinite(cost)]):
        graph = scipy.sparse.csr_matrix((cost <= c).astype(np.int8))
        if np.all(maximum_bipartite_matching(graph, perm_type="column") >= 0):
            return float(c)
    return 0.0


def gudhi_h0(D: np.ndarray, *, points: bool = False) -> np.ndarray:
    """Finite H0 intervals of gudhi's full Rips complex (``points=True``: rows of D as points)."""
    rips = gudhi.RipsComplex(points=D) if points else gudhi.RipsComplex(distance_matrix=D)
    tree = rips.create_simplex_tree(max_dimension=1)
    tree.persistence()
    intervals = tree.persistence_intervals_in_dimension(0)
    return intervals[np.isfinite(intervals[:, 1])]


# --- preprocessing -------------------------------------------------------------------------


def test_normalize_space_matches_slow_computation():
    raw = (np.random.default_rng(0).normal(size=(40, 7)) * 3 + 1).astype(np.float32)
    out = normalize_space(raw)
    assert out.dtype == np.float64
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-12)
    unit = [row / np.sqrt(sum(v * v for v in row)) for row in raw.astype(np.float64)]
    mean = [sum(u[c] for u in unit) / len(unit) for c in range(raw.shape[1])]
    centred = [np.array([u[c] - mean[c] for c in range(raw.shape[1])]) for u in unit]
    slow = np.array([c / np.sqrt(sum(v * v for v in c)) for c in centred])
    np.testing.assert_allclose(out, slow, atol=1e-12)


def test_normalize_space_errors_name_the_row():
    raw = np.random.default_rng(0).normal(size=(6, 4))
    raw[3] = 0.0
    with pytest.raises(WeatkitError, match="row 3 has zero norm"):
        normalize_space(raw)
    raw[3] = 1.0
    raw[4, 2] = np.nan
    with pytest.raises(WeatkitError, match="row 4 has a NaN"):
        normalize_space(raw)
    with pytest.raises(WeatkitError, match="row 0 has zero norm after mean-centring"):
        normalize_space(np.ones((1, 3)))
    with pytest.raises(WeatkitError, match="2-d"):
        normalize_space(np.ones(3))


# --- EV ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n", "dim", "seed"), [(2, 3, 0), (60, 5, 1), (150, 30, 2)])
def test_knn_graph_matches_brute_force(n, dim, seed):
    X = np.random.default_rng(seed).normal(size=(n, dim))
    adj = knn_graph(X, device="cpu")
    dense = adj.toarray()
    np.testing.assert_array_equal(dense, dense.T)
    assert np.all(np.diag(dense) == 0) and set(np.unique(dense)) <= {0.0, 1.0}
    nn = brute_nearest(X)
    D = cdist(X, X)
    np.fill_diagonal(D, np.inf)
    np.testing.assert_array_equal(nn, D.argmin(axis=1))
    expected = np.zeros((n, n))
    expected[np.arange(n), nn] = expected[nn, np.arange(n)] = 1.0
    np.testing.assert_array_equal(dense, expected)


def test_knn_graph_ties_go_to_the_lowest_index():
    rng = np.random.default_rng(3)
    X = rng.normal(size=(40, 6))
    X[[7, 12, 30]] = X[20]  # four identical rows: 7, 12, 20, 30
    X[25] = X[2]
    X[26:38] = X[1]  # 13 identical rows: more ties than the 8 refined candidates
    nn = brute_nearest(X)
    assert nn[20] == 7 and nn[7] == 12 and nn[2] == 25 and nn[25] == 2
    assert nn[1] == 26 and np.all(nn[26:38] == 1)
    dense = knn_graph(X, device="cpu").toarray()
    expected = np.zeros((40, 40))
    expected[np.arange(40), nn] = expected[nn, np.arange(40)] = 1.0
    np.testing.assert_array_equal(dense, expected)
    with pytest.raises(WeatkitError, match="at least 2 rows"):
        knn_graph(X[:1])


@pytest.mark.parametrize(("n", "seed"), [(50, 0), (137, 1), (400, 2)])
def test_laplacian_spectrum_matches_networkx(n, seed):
    X = space(n, 20, seed)
    ours = laplacian_spectrum(knn_graph(X, device="cpu"))
    ref = nx.laplacian_spectrum(reference_graph(X))
    assert ours.shape == (n,)
    assert np.all(np.diff(ours) >= 0)
    np.testing.assert_allclose(ours, np.sort(ref), rtol=0, atol=1e-8)


def test_laplacian_spectrum_general_graphs():
    rng = np.random.default_rng(4)
    G = nx.disjoint_union_all(
        [nx.gnp_random_graph(30, 0.2, seed=1), nx.path_graph(5), nx.empty_graph(3)]
        + [nx.cycle_graph(4) for _ in range(3)]
    )
    A = nx.to_numpy_array(G) * rng.uniform(0.5, 2.0)
    A[0, 0] = 2.0  # a self loop cancels in D − A
    L = np.diag(A.sum(axis=1)) - A
    expected = np.linalg.eigvalsh(L)
    np.testing.assert_allclose(laplacian_spectrum(A), expected, atol=1e-8)
    np.testing.assert_allclose(laplacian_spectrum(scipy.sparse.csr_matrix(A)), expected, atol=1e-8)
    with pytest.raises(WeatkitError, match="not symmetric"):
        laplacian_spectrum(np.triu(np.ones((3, 3)), 1))


def test_select_k_hand_worked():
    # cumulative shares of [0, 1, 2, 3, 4]: 0, .1, .3, .6, 1
    assert select_k(np.array([0.0, 1, 2, 3, 4])) == 5
    assert select_k(np.array([0.0, 1, 2, 3, 4]), 0.6) == 4
    assert select_k(np.array([0.0, 1, 2, 3, 4]), 0.3) == 3
    # descending: 4, 7, 9 of 10 → 0.9 reached at k = 3
    assert select_k(np.array([4.0, 3, 2, 1, 0])) == 3
    assert select_k(np.zeros(4)) == 4
    rng = np.random.default_rng(5)
    for _ in range(50):
        s = np.sort(rng.exponential(size=rng.integers(1, 60)))
        e = float(rng.uniform(0.05, 1.0))
        assert select_k(s, e) == reference_select_k(s, e)
    with pytest.raises(WeatkitError, match="energy"):
        select_k(np.ones(3), 1.5)


@pytest.mark.parametrize("order", ["ascending", "descending"])
def test_ev_matches_dense_reference(order):
    X = space(300, 40, 6)
    Y = noisy(X, 0.3, 7)
    result = eigenvector_similarity(X, Y, order=order, device="cpu")
    value, k = reference_ev(X, Y, order)
    assert result.k == k and result.order == order
    assert result.value == pytest.approx(value, rel=1e-9, abs=1e-9)
    assert result.value > 0


def test_ev_different_sizes_and_dims_use_the_smaller_k():
    X, Y = space(250, 30, 8), space(120, 12, 9)
    result = eigenvector_similarity(X, Y, device="cpu")
    value, k = reference_ev(X, Y, "ascending")
    assert result.k == min(result.k_src, result.k_tgt) == k
    assert result.k <= 120
    assert result.value == pytest.approx(value, rel=1e-9)
    with pytest.raises(WeatkitError, match="order"):
        eigenvector_similarity(X, Y, order="largest")


# --- GH ---------------------------------------------------------------------------------------


def test_cosine_distance_matrix():
    X = space(50, 8, 10)
    D = cosine_distance_matrix(X, device="cpu")
    assert D.dtype == np.float64 and np.all(np.diag(D) == 0)
    np.testing.assert_array_equal(D, D.T)
    np.testing.assert_allclose(D, cdist(X, X), atol=1e-7)
    direct = np.sqrt(2 - 2 * np.clip(X @ X.T, -1, 1))
    np.fill_diagonal(direct, 0.0)
    np.testing.assert_allclose(D, direct, atol=1e-12)


@pytest.mark.parametrize(
    ("n", "seed", "duplicates"), [(20, 0, False), (90, 1, True), (150, 2, True)]
)
def test_h0_diagram_matches_gudhi(n, seed, duplicates):
    P = np.random.default_rng(seed).normal(size=(n, 4))
    if duplicates:
        P[[5, 9, 11]] = P[3]
        P[1] = P[0]
    D = cdist(P, P)
    ours = h0_diagram(D)
    ref = gudhi_h0(D)
    assert np.all(ours[:, 0] == 0)
    assert len(ours) == len(ref) == n - 1 - (4 if duplicates else 0)
    np.testing.assert_array_equal(ours[:, 1], np.sort(ref[:, 1]))


def test_h0_diagram_matches_scipy_mst():
    from scipy.sparse.csgraph import minimum_spanning_tree

    D = cosine_distance_matrix(space(200, 10, 11), device="cpu")
    mst = minimum_spanning_tree(D)
    np.testing.assert_array_equal(h0_diagram(D)[:, 1], np.sort(mst.data))


def test_bottleneck_fast_path_matches_gudhi_exact():
    rng = np.random.default_rng(12)
    for trial in range(200):
        m1, m2 = rng.integers(0, 30, size=2)
        digits = int(rng.integers(1, 4))  # coarse rounding → many ties
        a = np.round(rng.exponential(size=m1), digits)
        b = np.round(rng.exponential(size=m2), digits)
        da, db = np.c_[np.zeros(m1), a], np.c_[np.zeros(m2), b]
        assert bottleneck_distance(da, db) == gudhi.bottleneck_distance(da, db, e=0), trial
    # brute force, including scales far apart (where gudhi 3.13's e=0 search can overshoot)
    for trial in range(60):
        m1, m2 = rng.integers(0, 12, size=2)
        a = rng.random(m1) * (1e-3 if trial % 2 else 1.0)
        b = rng.random(m2) * (1e3 if trial % 2 else 1.0)
        da, db = np.c_[np.zeros(m1), a], np.c_[np.zeros(m2), b]
        assert bottleneck_distance(da, db) == brute_bottleneck(a, b), trial
    a, b = np.array([6.7e-4, 7.9e-4, 9.7e-4]), np.array([302.13, 378.16, 403.3])
    assert bottleneck_distance(np.c_[np.zeros(3), a], np.c_[np.zeros(3), b]) == 403.3 / 2
    general = np.array([[0.1, 0.5], [0.2, 0.9]]), np.array([[0.15, 0.45]])
    assert bottleneck_distance(*general) == gudhi.bottleneck_distance(*general, e=0)


def test_gh_matches_gudhi_pipeline():
    X, Y = space(120, 10, 13), noisy(space(120, 10, 13), 0.2, 14)
    for points, as_points in (("distances", False), ("distance-rows", True)):
        dgms = [gudhi_h0(cosine_distance_matrix(M, device="cpu"), points=as_points) for M in (X, Y)]
        expected = gudhi.bottleneck_distance(dgms[0], dgms[1], e=0)
        result = gromov_hausdorff(X, Y, points=points, device="cpu")
        assert result.value == pytest.approx(expected, abs=1e-10)
        assert result.per_dim == {0: result.value}
        assert result.value > 0


def test_h1_of_a_noisy_circle_has_one_long_bar():
    rng = np.random.default_rng(15)
    t = rng.uniform(0, 2 * np.pi, 80)
    P = np.c_[np.cos(t), np.sin(t)] + rng.normal(scale=0.03, size=(80, 2))
    bars = h1_diagram(cdist(P, P))
    life = np.sort(bars[:, 1] - bars[:, 0])
    assert life[-1] > 1.0  # born near the sampling gap, dies near sqrt(3)
    assert life[:-1].max(initial=0.0) < 0.2
    # the circle through normalize_space (still a unit circle) against a blob: H1 tells them apart
    X = normalize_space(np.c_[P, np.full(80, 0.5)])
    blob = space(80, 3, 16)
    result = gromov_hausdorff(X, blob, dims=(0, 1), device="cpu")
    dgms = [h1_diagram(cosine_distance_matrix(M)) for M in (X, blob)]
    assert result.per_dim[1] == gudhi.bottleneck_distance(*dgms, e=0)
    assert result.per_dim[1] > 0.5
    assert result.value == min(result.per_dim.values()) == result.per_dim[0]
    same = gromov_hausdorff(X, X[::-1].copy(), dims=(0, 1), device="cpu")
    assert same.per_dim == pytest.approx({0: 0.0, 1: 0.0}, abs=1e-6)  # H1 is float32 (ripser)


def test_gh_options_are_checked():
    X = space(10, 3, 16)
    with pytest.raises(WeatkitError, match="points"):
        gromov_hausdorff(X, X, points="rows")
    with pytest.raises(WeatkitError, match="dims"):
        gromov_hausdorff(X, X, dims=())
    with pytest.raises(WeatkitError, match="symmetric"):
        h0_diagram(np.triu(np.ones((4, 4))))


# --- GW ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("n1", "n2"), [(6, 6), (9, 12)])
def test_gw_matches_explicit_four_index_sum(n1, n2):
    X, Y = space(n1, 5, 17), space(n2, 4, 18)
    C1, C2 = (cosine_distance_matrix(M, device="cpu") for M in (X, Y))
    p, q = np.full(n1, 1 / n1), np.full(n2, 1 / n2)
    T = ot.gromov.gromov_wasserstein(C1, C2, p, q, loss_fun="square_loss")
    loss = 0.0
    for i in range(n1):
        for j in range(n2):
            for k in range(n1):
                for m in range(n2):
                    loss += (C1[i, k] - C2[j, m]) ** 2 * T[i, j] * T[k, m]
    result = gromov_wasserstein(X, Y, device="cpu")
    assert (result.n_src, result.n_tgt) == (n1, n2)
    assert result.value == pytest.approx(loss, rel=1e-10, abs=1e-14)
    np.testing.assert_allclose(T.sum(axis=1), p, atol=1e-12)


# --- invariances --------------------------------------------------------------------------------


def test_rotation_and_permutation_invariance():
    X = space(400, 30, 19)
    R = ortho_group.rvs(30, random_state=20)
    perm = np.random.default_rng(21).permutation(400)
    for Y in (X @ R, (X @ R)[perm]):
        assert eigenvector_similarity(X, Y, device="cpu").value == pytest.approx(0, abs=1e-8)
        assert eigenvector_similarity(X, Y, order="descending", device="cpu").value == (
            pytest.approx(0, abs=1e-8)
        )
        assert gromov_hausdorff(X, Y, device="cpu").value == pytest.approx(0, abs=1e-8)
    small = X[:150]
    assert gromov_wasserstein(small, small @ R, device="cpu").value == pytest.approx(0, abs=1e-6)


def test_noise_increases_ev_and_gh():
    # noise of relative norm 1%, 5%, 30%; averaged over seeds (EV of one pair is noisy, and stops
    # growing once the noise makes the spaces unrelated)
    scales = (0.01, 0.05, 0.3)
    ev = np.zeros(len(scales))
    gh = np.zeros(len(scales))
    for seed in range(4):
        X = space(400, 50, 30 + seed)
        for s, scale in enumerate(scales):
            Y = noisy(X, scale, 40 + seed)
            ev[s] += eigenvector_similarity(X, Y, device="cpu").value
            gh[s] += gromov_hausdorff(X, Y, device="cpu").value
    assert np.all(np.diff(ev) > 0), ev
    assert np.all(np.diff(gh) > 0), gh


def test_measures_are_symmetric():
    X, Y = space(200, 20, 50), space(200, 16, 51)
    assert eigenvector_similarity(X, Y).value == eigenvector_similarity(Y, X).value
    assert gromov_hausdorff(X, Y).value == gromov_hausdorff(Y, X).value
    gw_xy = gromov_wasserstein(X[:80], Y[:80]).value
    assert gw_xy == pytest.approx(gromov_wasserstein(Y[:80], X[:80]).value, rel=1e-9)
    assert gw_xy > 0


def test_different_sizes_and_dims():
    X, Y = space(180, 25, 52), space(90, 7, 53)
    gh = gromov_hausdorff(X, Y, device="cpu")
    assert (gh.n_src, gh.n_tgt) == (180, 90) and gh.value > 0
    dgms = [gudhi_h0(cosine_distance_matrix(M)) for M in (X, Y)]
    assert gh.value == pytest.approx(gudhi.bottleneck_distance(*dgms, e=0), abs=1e-10)
    gw = gromov_wasserstein(X[:60], Y[:40], device="cpu")
    assert (gw.n_src, gw.n_tgt) == (60, 40) and gw.value > 0


# --- CUDA ---------------------------------------------------------------------------------------


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA not available")
def test_cuda_matches_cpu():
    X = space(3000, 300, 60)
    cpu = knn_graph(X, device="cpu")
    gpu = knn_graph(X, device="cuda")
    assert (cpu != gpu).nnz == 0
    np.testing.assert_allclose(
        cosine_distance_matrix(X, device="cuda"),
        cosine_distance_matrix(X, device="cpu"),
        atol=1e-12,
    )
    Y = noisy(X, 0.2, 61)
    cpu_ev = eigenvector_similarity(X, Y, device="cpu").value
    assert eigenvector_similarity(X, Y, device="cuda").value == pytest.approx(cpu_ev, rel=1e-12)
    cpu_gh = gromov_hausdorff(X[:1000], Y[:1000], device="cpu").value
    gpu_gh = gromov_hausdorff(X[:1000], Y[:1000], device="cuda").value
    assert gpu_gh == pytest.approx(cpu_gh, abs=1e-12)
