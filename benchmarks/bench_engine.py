"""Time the batched engine on the CA-WEAT paper's grid against a per-resample loop and WEFE.

The grid: 2 tests × 91 lists × 16 embeddings = 2,912 WEATs on 300-d vectors, 25 items per set
(a few sets one or two short, as after OOV removal), 5,000 bootstraps and 10,000 permutations
per test, in one :func:`weatkit.engine.weat.run_weat` call. Baselines, measured in the same run:

* a plain per-resample loop, as the XWEAT / CA-WEAT reference code: similarities once, then a
  Python loop over resamples (and over words inside each resample); timed on
  ``--baseline-tests`` tests and scaled to the grid;
* WEFE's ``WEAT.run_query`` (``pip install 'weatkit[bench]'``) with the same 10,000
  permutations (``p_value_iterations``), on ``--wefe-tests`` tests, against weatkit on the same
  tests with the same permutations (no bootstrap: WEFE has none) and WEFE's conventions
  (ddof 0, right-sided). The effect sizes must agree; the p-values differ by Monte-Carlo error
  and because WEFE draws its "permutations" with replacement;
* with a GPU, the same grid on the CPU.

    python benchmarks/bench_engine.py [--device auto] [--baseline-tests 2] [--wefe-tests 1]
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import replace

import numpy as np
import torch
from common import Figure, print_table, timed

from weatkit.engine.device import resolve_device
from weatkit.engine.weat import EngineOptions, WeatInput, run_weat
from weatkit.stats.resampling import bootstrap_indices, clear_plan_cache


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


def wefe_weat(t: WeatInput, n_perm: int) -> tuple[float, float]:
    """WEFE's effect size and p-value for one test (its words are ``X0``, ``A3``, ...)."""
    from gensim.models import KeyedVectors
    from wefe.metrics import WEAT
    from wefe.query import Query
    from wefe.word_embedding_model import WordEmbeddingModel

    sets = {"X": t.X, "Y": t.Y, "A": t.A, "B": t.B}
    kv = KeyedVectors(vector_size=t.X.shape[1])
    words = {name: [f"{name}{i}" for i in range(len(v))] for name, v in sets.items()}
    kv.add_vectors([w for ws in words.values() for w in ws], np.concatenate(list(sets.values())))
    query = Query([words["X"], words["Y"]], [words["A"], words["B"]], ["X", "Y"], ["A", "B"])
    out = WEAT().run_query(
        query,
        WordEmbeddingModel(kv, "bench"),
        calculate_p_value=True,
        p_value_iterations=n_perm,
        p_value_test_type="right-sided",
    )
    return float(out["effect_size"]), float(out["p_value"])


def with_cpu(fn: Callable[[], object]) -> tuple[float, str]:
    """The wall time of ``fn`` and a note with the process's CPU time and the load average
    (1 min) before and after: on shared cores the CPU time is the comparable figure."""
    load, cpu = os.getloadavg()[0], time.process_time()
    _, wall = timed(fn)
    return wall, f"CPU {time.process_time() - cpu:.2f} s, load {load:.1f}→{os.getloadavg()[0]:.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--tests", type=int, default=2 * 91 * 16)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--bootstrap", type=int, default=5000)
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--device", default="auto")
    ap.add_argument("--baseline-tests", type=int, default=2)
    ap.add_argument("--wefe-tests", type=int, default=1, help="0 skips WEFE")
    args = ap.parse_args()

    tests = make_grid(args.tests, args.dim)
    device = str(resolve_device(args.device))
    opts = EngineOptions(
        n_bootstrap=args.bootstrap, n_permutations=args.permutations, device=device
    )
    grid = f"{args.tests:,} WEATs, {args.dim}-d, B={args.bootstrap:,}, P={args.permutations:,}"
    figures = []
    run_weat(tests[:4], opts)  # warm-up (kernels, allocator)

    def grid_time(options: EngineOptions) -> tuple[float, str]:
        clear_plan_cache()  # a first run: permutation plans drawn, as in a fresh process
        return with_cpu(lambda: run_weat(tests, options))

    engine_s, engine_note = grid_time(opts)
    cached_s, cached_note = with_cpu(lambda: run_weat(tests, opts))
    few = tests[: args.baseline_tests]
    _, loop_s = timed(lambda: [loop_baseline(t, args.bootstrap, args.permutations, 0) for t in few])
    loop = f"per-resample Python loop (scaled from {len(few)} tests)"
    loop_grid_s = loop_s / len(few) * args.tests
    figures.append(
        Figure(f"paper grid ({grid}), {device}", engine_s, "s", loop, loop_grid_s, engine_note)
    )
    figures.append(
        Figure(
            f"the same, plans cached (a grid's later jobs), {device}",
            cached_s,
            "s",
            loop,
            loop_grid_s,
            cached_note,
        )
    )
    if device != "cpu":
        cpu_s, cpu_note = grid_time(replace(opts, device="cpu"))
        figures.append(
            Figure(f"paper grid, {device}", engine_s, "s", "weatkit, CPU", cpu_s, cpu_note)
        )

    if args.wefe_tests:
        subset = tests[: args.wefe_tests]
        like_wefe = EngineOptions(
            ddof=0, n_bootstrap=0, n_permutations=args.permutations, device=device
        )
        ours, ours_s = timed(lambda: run_weat(subset, like_wefe))
        wefe_weat(subset[0], 10)  # imports
        wefe_results, wefe_s = timed(lambda: [wefe_weat(t, args.permutations) for t in subset])
        d_diff = max(abs(r.effect_size - w[0]) for r, w in zip(ours, wefe_results, strict=True))
        pvals = ", ".join(
            f"{r.pvalue:.4f} vs {w[1]:.4f}" for r, w in zip(ours, wefe_results, strict=True)
        )
        figures.append(
            Figure(
                f"{len(subset)} WEAT(s), P={args.permutations:,}, no bootstrap, {device}",
                ours_s,
                baseline_name="WEFE 1.0 WEAT.run_query, same P",
                baseline=wefe_s,
                note=f"max |d − d_WEFE| = {d_diff:.1e}; p weatkit vs WEFE: {pvals}",
            )
        )
    print_table("Engine: the CA-WEAT paper's grid", figures)
    print(f"\ntorch device {device}; {torch.get_num_threads()} CPU threads (the engine's workers)")


if __name__ == "__main__":
    main()
