"""CEAT's draws: weatkit against ceat.py's Python loop on the same vectors.

For each of WEAT 1–10 (the caliskan lists' sizes), every word gets ``--contexts`` random
768-dimensional context vectors; weatkit draws ``--draws`` WEATs and pools them
(:func:`weatkit.ceat.draws.ceat_test`, all draws at once); the baseline is a faithful
re-implementation of ``ceat.py``'s ``ceat_meta`` loop (weiguowilliam/CEAT: per draw, one
``np.random.randint`` per word, ``effect_size`` with scikit-learn's ``cosine_similarity`` per
word), timed on ``--sample`` draws per test and extrapolated to ``--draws``.

    python benchmarks/bench_ceat.py [--device cpu] [--contexts 50] [--draws 10000] [--sample 20]
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
from common import Figure, print_table, timed
from sklearn.metrics.pairwise import cosine_similarity

from weatkit.ceat.draws import ceat_test, choose_method
from weatkit.lists.model import SET_KEYS
from weatkit.lists.sources import select_lists


def _associate(w, A, B):
    return (
        cosine_similarity(w.reshape(1, -1), A).mean()
        - cosine_similarity(w.reshape(1, -1), B).mean()
    )


def _effect_size(X, Y, A, B):
    delta = np.mean([_associate(X[i, :], A, B) for i in range(X.shape[0])]) - np.mean(
        [_associate(Y[i, :], A, B) for i in range(Y.shape[0])]
    )
    XY = np.concatenate((X, Y), axis=0)
    s = [_associate(XY[i, :], A, B) for i in range(XY.shape[0])]
    sd = np.std(s, ddof=1)
    return delta / sd, sd**2


def ceat_py_loop(groups: list[list[np.ndarray]], n: int) -> tuple[list[float], list[float]]:
    """ceat.py's loop over draws: the vectors of one random context per word, then effect_size."""
    e_lst, v_lst = [], []
    for _ in range(n):
        X, Y, A, B = (np.array([w[np.random.randint(0, len(w))] for w in g]) for g in groups)
        e, v = _effect_size(X, Y, A, B)
        e_lst.append(e)
        v_lst.append(v)
    return e_lst, v_lst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--contexts", type=int, default=50)
    parser.add_argument("--draws", type=int, default=10_000)
    parser.add_argument("--sample", type=int, default=20)
    parser.add_argument("--dim", type=int, default=768)
    args = parser.parse_args()

    tests = select_lists(["caliskan"], tests=[f"weat{i}" for i in range(1, 11)]).tests
    rng = np.random.default_rng(0)
    figures, ours_total, loop_total = [], 0.0, 0.0
    load = os.getloadavg()[0]
    for test in tests:
        sizes = [len(getattr(test, s)) for s in SET_KEYS]
        groups = [[rng.normal(size=(args.contexts, args.dim)) for _ in range(n)] for n in sizes]
        result, ours = timed(
            lambda groups=groups: ceat_test(groups, n_draws=args.draws, device=args.device)
        )
        t0 = time.perf_counter()
        ceat_py_loop(groups, args.sample)
        loop = (time.perf_counter() - t0) / args.sample * args.draws
        ours_total += ours
        loop_total += loop
        method = choose_method(sizes, [args.contexts] * sum(sizes), args.draws, args.dim)
        figures.append(
            Figure(
                f"{test.test} ({'/'.join(map(str, sizes))} words), {args.draws:,} draws",
                ours,
                baseline_name=f"ceat.py loop ({args.sample} draws, extrapolated)",
                baseline=loop,
                note=f"method {method}; CES {result.statistic:+.4f}",  # type: ignore[attr-defined]
            )
        )
    figures.append(
        Figure("WEAT 1–10 together", ours_total, baseline_name="ceat.py loop", baseline=loop_total)
    )
    print_table(
        f"CEAT draws on {args.device}: {args.contexts} contexts per word, d = {args.dim} "
        f"(load average {load:.1f} at the start)",
        figures,
    )


if __name__ == "__main__":
    main()
