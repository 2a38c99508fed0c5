"""What ``--influence`` (and the sign stability) cost: the CA-WEAT paper's grid with and without.

* engine: the grid of ``bench_engine.py`` (2 tests × 91 lists × 16 embeddings = 2,912 WEATs on
  300-d vectors, 25 items per set, 5,000 bootstraps, 10,000 permutations) in one
  :func:`weatkit.engine.weat.run_weat` call, plans cached, with ``influence=False`` and
  ``influence=True``; the sign stability is counted in both (it is always on);
* end to end: ``weatkit.run`` on ``--lists ca-weat`` with the GloVe default (the English lists
  run, the others are skipped for coverage), without and with the influence table.

The baseline of each row is the same work without influence; the ratio (below 1) is the
slow-down.

    python benchmarks/bench_influence.py [--device cpu] [--repeat 2]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from bench_engine import make_grid
from common import Figure, print_table, timed

import weatkit
from weatkit.engine.weat import EngineOptions, run_weat


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--tests", type=int, default=2 * 91 * 16)
    args = parser.parse_args()

    tests = make_grid(args.tests, 300)
    plain = EngineOptions(device=args.device)
    with_influence = replace(plain, influence=True)
    run_weat(tests[:8], plain)  # warm-up: imports, and the permutation plans cached
    run_weat(tests, plain)
    _, t_plain = timed(lambda: run_weat(tests, plain), args.repeat)
    _, t_infl = timed(lambda: run_weat(tests, with_influence), args.repeat)

    config = weatkit.RunConfig(lists=("ca-weat",), engine=plain)
    weatkit.run(config, show_progress=False)  # warm-up: the GloVe files in the page cache
    _, r_plain = timed(lambda: weatkit.run(config, show_progress=False), args.repeat)
    infl_config = replace(config, engine=with_influence)
    out, r_infl = timed(lambda: weatkit.run(infl_config, show_progress=False), args.repeat)
    n_rows = len(out.influence)  # type: ignore[attr-defined]
    n_run = len(out.results)  # type: ignore[attr-defined]

    print_table(
        f"--influence on {args.device}",
        [
            Figure(
                f"paper grid ({args.tests:,} WEATs), influence on",
                t_infl,
                baseline_name="the same, influence off",
                baseline=t_plain,
            ),
            Figure(
                f"weatkit.run --lists ca-weat, GloVe ({n_run} tests), influence on",
                r_infl,
                baseline_name="the same, influence off",
                baseline=r_plain,
                note=f"{n_rows:,} influence rows",
            ),
        ],
    )


if __name__ == "__main__":
    main()
