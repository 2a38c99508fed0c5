"""How the engine's time grows with the number of lists and the number of resamples.

Two sweeps of :func:`weatkit.engine.weat.run_weat` over tests like the CA-WEAT paper's (300-d,
25 items per set):

* lists: ``--lists`` WEATs (91 lists × 2 tests × 1, 2, 4, 8, 16 embeddings) at the paper's
  5,000 bootstraps and 10,000 permutations;
* resamples: ``--resample-tests`` WEATs with B bootstraps and 2·B permutations, B from 625 to
  20,000.

For each sweep the exponent k of time ∝ n^k is the least-squares slope of log(time) against
log(n), over all points and between the two largest (k = 1: linear; below 1: fixed costs or an
idle GPU still being amortised). Each point is the best of ``--repeat`` runs after a warm-up;
permutation plans are drawn once (at the first point that needs them) and then cached.

    python benchmarks/bench_scaling.py [--device auto] [--repeat 2]
"""

from __future__ import annotations

import argparse

import numpy as np
from bench_engine import make_grid
from common import machine, timed

from weatkit.engine.device import resolve_device
from weatkit.engine.weat import EngineOptions, run_weat


def exponent(ns: list[int], seconds: list[float]) -> float:
    """Slope of log(seconds) against log(n)."""
    slope, _ = np.polyfit(np.log(ns), np.log(seconds), 1)
    return float(slope)


def sweep(
    title: str, unit: str, points: list[tuple[int, list, EngineOptions]], repeat: int
) -> None:
    """Time each point and print the table and the fitted exponent."""
    print(f"\n#### {title}\n\n| n ({unit}) | seconds | ms per unit |\n|---|---|---|")
    ns, secs = [], []
    for n, tests, options in points:
        _, s = timed(lambda tests=tests, options=options: run_weat(tests, options), repeat)
        ns.append(n)
        secs.append(s)
        print(f"| {n:,} | {s:.3f} | {1000 * s / n:.4f} |", flush=True)
    print(
        f"\nexponent k (time ∝ n^k): **{exponent(ns, secs):.2f}** over all points, "
        f"**{exponent(ns[-2:], secs[-2:]):.2f}** between the two largest"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lists", type=int, nargs="+", default=[182 * m for m in (1, 2, 4, 8, 16)])
    ap.add_argument(
        "--resamples", type=int, nargs="+", default=[625, 1250, 2500, 5000, 10000, 20000]
    )
    ap.add_argument("--resample-tests", type=int, default=364)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--device", default="auto")
    args = ap.parse_args()
    device = str(resolve_device(args.device))
    tests = make_grid(max(max(args.lists), args.resample_tests), args.dim)
    paper = EngineOptions(n_bootstrap=5000, n_permutations=10000, device=device)
    run_weat(tests[:8], paper)  # warm-up

    print(f"### Scaling of the engine ({device})\n\nmachine: {machine()}")
    sweep(
        "Number of WEATs (B = 5,000, P = 10,000)",
        "WEATs",
        [(n, tests[:n], paper) for n in args.lists],
        args.repeat,
    )
    few = tests[: args.resample_tests]
    sweep(
        f"Resamples per WEAT ({args.resample_tests} WEATs, B bootstraps + 2·B permutations)",
        "bootstraps",
        [
            (b, few, EngineOptions(n_bootstrap=b, n_permutations=2 * b, device=device))
            for b in args.resamples
        ],
        args.repeat,
    )


if __name__ == "__main__":
    main()
