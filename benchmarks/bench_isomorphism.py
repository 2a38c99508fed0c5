"""Time the isomorphism measures against the reference approach of cambridgeltl/iso-study.

* EV at 10,000 words: ours = torch 1-NN (exact, chunked) + component-wise Laplacian spectrum;
  baseline = what ``evs_script.py`` does: nearest neighbours (brute force with scipy ``cdist``,
  standing in for sklearn's ball tree), a ``networkx.Graph`` and ``networkx.laplacian_spectrum``
  (one dense ``n × n`` eigendecomposition per space).
* GH at 5,000 words: ours = MST H0 diagram + exact one-dimensional bottleneck; baseline = what
  ``gh_script.py`` does: the full gudhi Rips complex (``create_simplex_tree(max_dimension=1)``),
  ``persistence()``, and ``gudhi.bottleneck_distance(e=0)``. ``--gh-baseline-n`` runs the
  baseline at a smaller n and scales its time by ``(n / n_baseline)²`` (edges of the complex).
* GW at 1,000 words: ours only (POT ``gromov_wasserstein2``; there is no faster reference).

Spaces: two independent random 300-d spaces (normalised), or ``--src``/``--tgt`` ``.vec`` files
(first rows, normalised over the rows loaded).

    python benchmarks/bench_isomorphism.py [--device auto] [--gh-baseline-n 2000]
"""

from __future__ import annotations

import argparse
import time

import gudhi
import networkx as nx
import numpy as np
from common import Figure, print_table, timed
from scipy.spatial.distance import cdist

from weatkit.isomorphism.eigenvector import eigenvector_similarity, select_k
from weatkit.isomorphism.gromov_hausdorff import cosine_distance_matrix, gromov_hausdorff
from weatkit.isomorphism.gromov_wasserstein import gromov_wasserstein
from weatkit.isomorphism.preprocess import float64_device, normalize_space

_EV_BASELINE = "1-NN graph + networkx.laplacian_spectrum (dense)"
_GH_BASELINE = "full gudhi Rips complex + persistence + bottleneck"


def load_spaces(args: argparse.Namespace, n: int) -> tuple[np.ndarray, np.ndarray, str]:
    if args.src and args.tgt:
        from weatkit.embeddings.static import load_static

        spaces = [load_static(p, first_n=n).vectors for p in (args.src, args.tgt)]
        what = f"{args.src} vs {args.tgt} (first {n} rows each, normalised over those rows)"
        return normalize_space(spaces[0]), normalize_space(spaces[1]), what
    rng = np.random.default_rng(args.seed)
    X = normalize_space(rng.normal(size=(n, args.dim)))
    Y = normalize_space(rng.normal(size=(n, args.dim)))
    return X, Y, f"two random {args.dim}-d Gaussian spaces, normalised (seed {args.seed})"


def nearest_brute(X: np.ndarray, chunk: int = 2000) -> np.ndarray:
    """Each row's nearest other row by brute force (scipy cdist), as sklearn's brute mode."""
    out = np.empty(len(X), dtype=np.int64)
    for s in range(0, len(X), chunk):
        D = cdist(X[s : s + chunk], X)
        D[np.arange(D.shape[0]), np.arange(s, s + D.shape[0])] = np.inf
        out[s : s + chunk] = D.argmin(axis=1)
    return out


def ev_reference(X: np.ndarray, Y: np.ndarray) -> tuple[float, float, float]:
    """evs_script.py: graph of (i, nn(i)), networkx spectrum, select_k, sum. Value, NN s, eig s."""
    spectra = []
    nn_s = eig_s = 0.0
    for M in (X, Y):
        t0 = time.perf_counter()
        nn = nearest_brute(M)
        G = nx.Graph()
        for i, j in enumerate(nn):
            G.add_edge(i, int(j))
        t1 = time.perf_counter()
        spectra.append(nx.laplacian_spectrum(G))
        nn_s += t1 - t0
        eig_s += time.perf_counter() - t1
    k = min(select_k(spectra[0]), select_k(spectra[1]))
    return float(np.sum((spectra[0][:k] - spectra[1][:k]) ** 2)), nn_s, eig_s


def gh_reference(X: np.ndarray, Y: np.ndarray, device: str) -> float:
    """gh_script.py on a distance matrix: full Rips complex, persistence, exact bottleneck."""
    diagrams = []
    for M in (X, Y):
        tree = gudhi.RipsComplex(distance_matrix=cosine_distance_matrix(M, device=device))
        simplex_tree = tree.create_simplex_tree(max_dimension=1)
        simplex_tree.persistence()
        diagrams.append(simplex_tree.persistence_intervals_in_dimension(0))
    return float(gudhi.bottleneck_distance(diagrams[0], diagrams[1], e=0))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--src", help=".vec file of the source space (with --tgt)")
    ap.add_argument("--tgt", help=".vec file of the target space (with --src)")
    ap.add_argument("--dim", type=int, default=300, help="dimension of the random spaces")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--ev-n", type=int, default=10_000)
    ap.add_argument("--gh-n", type=int, default=5_000)
    ap.add_argument("--gw-n", type=int, default=1_000)
    ap.add_argument("--gh-baseline-n", type=int, default=0, help="baseline n (0: = --gh-n)")
    ap.add_argument("--skip-ev-baseline", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="best of N runs for ours")
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    if bool(args.src) != bool(args.tgt):
        ap.error("--src and --tgt go together")

    n_max = max(args.ev_n, args.gh_n, args.gw_n)
    X, Y, what = load_spaces(args, n_max)
    device = args.device
    resolved = float64_device(device)
    eigenvector_similarity(X[:200], Y[:200], device=device)  # warm-up (imports, kernels)
    gromov_hausdorff(X[:200], Y[:200], device=device)
    gromov_wasserstein(X[:50], Y[:50], device=device)

    rows: list[Figure] = []
    notes: list[str] = []

    n = args.ev_n
    ev, ev_s = timed(lambda: eigenvector_similarity(X[:n], Y[:n], device=device), args.repeat)
    if args.skip_ev_baseline:
        rows.append(Figure(f"EV, {n:,} words", ev_s, note="baseline not run"))
        notes.append(f"EV ours = {ev.value:.12g} (k = {ev.k})")
    else:
        t0 = time.perf_counter()
        ref_value, nn_s, eig_s = ev_reference(X[:n], Y[:n])
        base_s = time.perf_counter() - t0
        rows.append(Figure(f"EV, {n:,} words", ev_s, "s", _EV_BASELINE, base_s))
        notes.append(
            f"EV ours = {ev.value:.12g} (k = {ev.k}), dense reference = {ref_value:.12g}, "
            f"difference = {abs(ev.value - ref_value):.3g}; reference time: 1-NN + graph "
            f"{nn_s:.1f} s, networkx.laplacian_spectrum {eig_s:.1f} s"
        )

    n = args.gh_n
    nb = args.gh_baseline_n or n
    gh, gh_s = timed(lambda: gromov_hausdorff(X[:n], Y[:n], device=device), args.repeat)
    t0 = time.perf_counter()
    ref_gh = gh_reference(X[:nb], Y[:nb], device)
    base_s = time.perf_counter() - t0
    if nb == n:
        rows.append(Figure(f"GH (H0), {n:,} words", gh_s, "s", _GH_BASELINE, base_s))
        notes.append(
            f"GH ours = {gh.value:.12g}, gudhi Rips = {ref_gh:.12g}, "
            f"difference = {abs(gh.value - ref_gh):.3g}"
        )
    else:
        scaled = base_s * (n / nb) ** 2
        rows.append(
            Figure(
                f"GH (H0), {n:,} words",
                gh_s,
                "s",
                _GH_BASELINE,
                scaled,
                note=f"baseline scaled from n={nb:,}",
            )
        )
        small = gromov_hausdorff(X[:nb], Y[:nb], device=device).value
        notes.append(
            f"GH baseline run at n = {nb:,} ({base_s:.2f} s) and scaled by (n/{nb})² to "
            f"{scaled:.1f} s; at n = {nb:,}: ours = {small:.12g}, gudhi = {ref_gh:.12g}, "
            f"difference = {abs(small - ref_gh):.3g}; ours at n = {n:,}: {gh.value:.12g}"
        )

    n = args.gw_n
    gw, gw_s = timed(lambda: gromov_wasserstein(X[:n], Y[:n], device=device), 1)
    rows.append(Figure(f"GW, {n:,} words", gw_s, note="POT, numpy float64"))
    notes.append(f"GW ours = {gw.value:.12g}")

    print_table(f"Isomorphism ({resolved}): {what}", rows)
    print()
    for line in notes:
        print(line)


if __name__ == "__main__":
    main()
