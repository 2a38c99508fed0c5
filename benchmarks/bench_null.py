"""What ``--null K`` costs: ``weatkit run --lists ca-weat`` with and without the null baseline.

End to end on the GloVe default (the English CA-WEAT lists run, the others are skipped for
coverage), on the CPU: the same run without ``--null`` is the baseline; with ``--null 1000``
the first 20,000 GloVe rows are loaded as candidates, banded by wordfreq frequency, and 1,000
frequency-matched X/Y pairs per test are drawn and scored (:mod:`weatkit.engine.null`).

    python benchmarks/bench_null.py [--device cpu] [--repeat 2] [--null 1000]
"""

from __future__ import annotations

import argparse
from dataclasses import replace

from common import Figure, print_table, timed

import weatkit
from weatkit.engine.weat import EngineOptions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--null", type=int, default=1000)
    args = parser.parse_args()

    plain = EngineOptions(device=args.device)
    config = weatkit.RunConfig(lists=("ca-weat",), engine=plain)
    weatkit.run(config, show_progress=False)  # warm-up: the GloVe files in the page cache
    _, t_plain = timed(lambda: weatkit.run(config, show_progress=False), args.repeat)
    null_config = replace(config, engine=replace(plain, null=args.null))
    out, t_null = timed(lambda: weatkit.run(null_config, show_progress=False), args.repeat)
    n_run = len(out.results)  # type: ignore[attr-defined]
    null_s = out.manifest["timings_s"].get("null", float("nan"))  # type: ignore[attr-defined]

    print_table(
        f"--null {args.null} on {args.device}",
        [
            Figure(
                f"weatkit.run --lists ca-weat, GloVe ({n_run} tests), --null {args.null}",
                t_null,
                baseline_name="the same, no null baseline",
                baseline=t_plain,
                note=f"null part {null_s:.2f} s (candidates, draws, d)",
            ),
        ],
    )


if __name__ == "__main__":
    main()
