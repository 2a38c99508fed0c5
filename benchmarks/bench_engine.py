"""Time the batched engine on the CA-WEAT paper's grid against a plain per-resample loop.

The grid: 2 tests × 91 lists × 16 embeddings = 2,912 WEATs on 300-d vectors, 25 items per set
(a few lists one or two short, as after OOV removal), 5,000 bootstraps and 10,000 permutations
per test. The baseline is what the XWEAT / CA-WEAT reference code does per test: precomputed
similarities, then a Python loop over resamples (and over words inside each resample). It is
timed on a few tests and scaled to the grid.

    python benchmarks/bench_engine.py [--device auto] [--baseline-tests 2]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import torch

from weatkit.engine.resampling import bootstrap_indices
from weatkit.engine.weat import EngineOptions, WeatInput, run_weat


def make_grid(n_tests: int, dim: int, seed: int = 0) -> list[WeatInput]:
    rng = np.random.default_rng(seed)
    tests = []
    for _ in range(n_tests):
        sizes = [25 - int(rng.choice([0, 0, 0, 0, 1, 2])) for _ in range(4)]
        X, Y, A, B = (rng.normal(size=(n, dim)).astype(np.float32) for n in sizes)
        tests.append(WeatInput(X, Y, A, B))
    return tests


def loop_baseline(t: WeatInput, n_boot: int, n_perm: int, seed: int) -> None:
    """Reference-style: similarities once, then a Python loop over resamples and words."""
    vecs = np.concatenate([t.X, t.Y, t.A, t.B]).astype(np.float64)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    sims = vecs @ vecs.T
    nx, ny, na, _ = t.sizes
    X = list(range(nx))
    Y = list(range(nx, nx + ny))
    A = list(range(nx + ny, nx + ny + na))
    B = list(range(nx + ny + na, len(vecs)))

    def s(w, a_set, b_set):
        return np.mean([sims[w, a] for a in a_set]) - np.mean([sims[w, b] for b in b_set])

    def stats(xs, ys, a_set, b_set):
        sx = [s(x, a_set, b_set) for x in xs]
        sy = [s(y, a_set, b_set) for y in ys]
        return sum(sx) - sum(sy), (np.mean(sx) - np.mean(sy)) / np.std(sx + sy, ddof=1)

    idx = bootstrap_indices(t.sizes, n_boot, seed)
    for r in range(n_boot):
        stats(
            [X[i] for i in idx["X"][r]],
            [Y[i] for i in idx["Y"][r]],
            [A[i] for i in idx["A"][r]],
            [B[i] for i in idx["B"][r]],
        )
    rng = np.random.default_rng(seed)
    union = X + Y
    observed = stats(X, Y, A, B)[0]
    scores = {w: s(w, A, B) for w in union}
    k = 0
    for _ in range(n_perm):
        perm = rng.permutation(union)
        xi = perm[:nx]
        k += sum(scores[w] for w in xi) - sum(scores[w] for w in perm[nx:]) >= observed


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tests", type=int, default=2 * 91 * 16)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--bootstrap", type=int, default=5000)
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--baseline-tests", type=int, default=2)
    args = ap.parse_args()

    tests = make_grid(args.tests, args.dim)
    opts = EngineOptions(
        n_bootstrap=args.bootstrap, n_permutations=args.permutations, device=args.device
    )
    run_weat(tests[:4], opts)  # warm-up (kernels, allocator)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    run_weat(tests, opts)
    engine_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for t in tests[: args.baseline_tests]:
        loop_baseline(t, args.bootstrap, args.permutations, 0)
    per_test = (time.perf_counter() - t0) / args.baseline_tests
    loop_s = per_test * args.tests

    device = (
        opts.device
        if args.device != "auto"
        else str("cuda" if torch.cuda.is_available() else "cpu")
    )
    print(
        f"machine: {platform.processor() or platform.machine()}, torch threads "
        f"{torch.get_num_threads()}, device {device}"
    )
    print(f"grid: {args.tests} tests, dim {args.dim}, B={args.bootstrap}, P={args.permutations}")
    print(f"{'what':<34}{'seconds':>12}{'per test (ms)':>16}")
    print(
        f"{'weatkit engine (whole grid)':<34}{engine_s:>12.2f}{1000 * engine_s / args.tests:>16.2f}"
    )
    print(
        f"{'plain loop (scaled from ' + str(args.baseline_tests) + ' tests)':<34}"
        f"{loop_s:>12.1f}{1000 * per_test:>16.1f}"
    )
    print(f"speed-up: {loop_s / engine_s:,.0f}x")


if __name__ == "__main__":
    main()
