"""Time a run of every association metric on the CA-WEAT paper's grid against WEFE's loop.

The grid is :func:`bench_engine.make_grid`'s: 2 tests × 91 lists × 16 embeddings = 2,912
queries, 300-d vectors, 25 items per set (a few one or two short). Here it is a run as
``weatkit run --metrics ...`` makes it: one list file of the 182 (test, list) queries, each with
the definitional pairs of :data:`parity_wefe.PAIRS`, and 16 spaces in memory, each holding the
vectors of every query's words, run by :func:`weatkit.pipeline.run` (the WEAT engine batched
over all queries, then the association metrics query by query). Timed, in alternated rounds
(weatkit, then WEFE, ``--rounds`` times; the median of each):

* weatkit, every metric of :data:`weatkit.association.options.METRICS` (WEAT with
  ``--bootstrap`` resamples and ``--permutations``, RND, RNSB, MAC, ECT, RIPA, SC-WEAT with its
  permutation p, DirectBias) with bootstrap intervals, on the whole grid;
* weatkit, the six metrics WEFE has (WEAT, RND, RNSB, MAC, ECT, RIPA), without bootstrap or
  permutations, on the first ``--wefe-jobs`` queries of the first space;
* WEFE 1.0.1's per-query loop (``run_query`` of each metric; built once in a virtual environment
  as :func:`parity_wefe.wefe_python` does) on those queries, with the nine queries per grid
  query that :func:`parity_wefe.wefe_queries` makes (WEAT, RND A|B, RNSB, MAC, ECT A|B,
  RIPA A|B): WEFE has no confidence intervals. Its models are built before the clock starts;
  the time for the grid is scaled from the queries timed, and labelled so.

    python benchmarks/bench_association.py [--spaces 16] [--lists 182] [--bootstrap 5000]
        [--permutations 10000] [--device auto] [--wefe-jobs 182] [--rounds 3] [--venv DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import yaml
from bench_engine import make_grid
from common import Figure, print_table, timed
from parity_wefe import METRICS as WEFE_HAS
from parity_wefe import PAIRS, WEFE_METRICS, wefe_python, wefe_queries

from weatkit.association.options import METRICS
from weatkit.embeddings.vectors import WordVectors
from weatkit.engine.device import resolve_device
from weatkit.engine.weat import EngineOptions
from weatkit.pipeline import RunConfig, RunResult, run

#: Times WEFE's loop over the queries of ``queries.json`` on the spaces of ``vectors.npz``.
WEFE_TIMER = (
    WEFE_METRICS
    + r"""
import time
data = np.load(sys.argv[1])
queries = json.load(open(sys.argv[2]))
models = {}
for space in dict.fromkeys(q["space"] for q in queries):
    models[space] = wefe_model(data[space + ".words"], data[space + ".vectors"], space)
t0 = time.perf_counter()
values = [float(wefe_value(q, models[q["space"]])) for q in queries]
print(json.dumps({"seconds": time.perf_counter() - t0, "values": values}))
"""
)


def grid(n_lists: int, n_spaces: int, dim: int) -> tuple[list[dict], list[WordVectors]]:
    """The list file's queries and the spaces: query j of space e is ``make_grid``'s test
    ``e * n_lists + j``; the pairs' words get random vectors in every space."""
    tests = make_grid(n_lists * n_spaces, dim)
    entries = [
        {
            "test": f"t{j}",
            "lang": "en",
            "list_id": "grid",
            **{
                k: [f"l{j}{k.lower()}{i}" for i in range(len(getattr(tests[j], k)))] for k in "XYAB"
            },
        }
        for j in range(n_lists)
    ]
    pair_words = [w for pair in PAIRS for w in pair]
    rng = np.random.default_rng(1)
    spaces = []
    for e in range(n_spaces):
        words = [w for entry in entries for k in "XYAB" for w in entry[k]] + pair_words
        rows = [getattr(tests[e * n_lists + j], k) for j in range(n_lists) for k in "XYAB"]
        rows.append(rng.normal(size=(len(pair_words), dim)).astype(np.float32))
        spaces.append(WordVectors(f"space{e}", words, np.concatenate(rows)))
    return entries, spaces


def run_weatkit(
    path: Path,
    spaces: list[WordVectors],
    metrics: tuple[str, ...],
    engine: EngineOptions,
    tests: tuple[str, ...] | None = None,
) -> RunResult:
    config = RunConfig(
        lists=(str(path),), tests=tests, embeddings=tuple(spaces), metrics=metrics, engine=engine
    )
    return run(config, show_progress=False)


def wefe_inputs(entries: list[dict], space: WordVectors, folder: Path) -> list[dict[str, Any]]:
    """``queries.json`` and ``vectors.npz``: WEFE's queries of ``entries`` on ``space``."""
    tests = [SimpleNamespace(test=e["test"], **{k: e[k] for k in "XYAB"}) for e in entries]
    queries = [{**q, "space": space.name} for q in wefe_queries(tests)]
    arrays = {f"{space.name}.words": np.array(space.words), f"{space.name}.vectors": space.vectors}
    np.savez(folder / "vectors.npz", **arrays)
    (folder / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
    (folder / "wefe_timer.py").write_text(WEFE_TIMER, encoding="utf-8")
    return queries


def largest_difference(result: RunResult, queries: list[dict], values: list[float]) -> str:
    """The largest |weatkit − WEFE| of ECT and MAC (their conventions agree: parity_wefe)."""
    rows = result.association.set_index(["test", "metric", "set"])["statistic"]
    out = []
    for metric in ("ect", "mac"):
        diffs = [
            abs(rows[(q["key"]["test"], metric, q["key"]["set"])] - value)
            for q, value in zip(queries, values, strict=True)
            if q["metric"] == metric
        ]
        out.append(f"{metric} {max(diffs):.1e}")
    return "largest difference to WEFE: " + ", ".join(out)


def run_wefe(python: Path, folder: Path) -> dict[str, Any]:
    """WEFE's loop in its environment: ``seconds`` (the loop alone) and the ``values``."""
    files = [folder / name for name in ("wefe_timer.py", "vectors.npz", "queries.json")]
    done = subprocess.run(
        [str(python), *map(str, files)],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def load() -> str:
    return "load average " + ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main() -> None:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--lists", type=int, default=2 * 91, help="(test, list) queries per space")
    ap.add_argument("--spaces", type=int, default=16)
    ap.add_argument("--dim", type=int, default=300)
    ap.add_argument("--bootstrap", type=int, default=5000)
    ap.add_argument("--permutations", type=int, default=10000)
    ap.add_argument("--device", default="auto")
    ap.add_argument(
        "--wefe-jobs",
        type=int,
        default=2 * 91,
        help="queries of the first space WEFE runs (0: none)",
    )
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--venv", type=Path, default=cache / "weatkit-bench" / "wefe-1.0.1")
    args = ap.parse_args()

    device = str(resolve_device(args.device))
    entries, spaces = grid(args.lists, args.spaces, args.dim)
    n_jobs = args.lists * args.spaces
    n_wefe = min(args.wefe_jobs, args.lists)
    subset = tuple(e["test"] for e in entries[:n_wefe])
    full = EngineOptions(
        n_bootstrap=args.bootstrap, n_permutations=args.permutations, device=device
    )
    bare = EngineOptions(n_bootstrap=0, n_permutations=0, device=device)
    times: dict[str, list[float]] = {"all": [], "six": [], "wefe": []}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = folder / "queries.yaml"
        pairs = [list(p) for p in PAIRS]
        path.write_text(yaml.safe_dump({"tests": entries, "pairs": pairs}), encoding="utf-8")
        python = wefe_python(args.venv) if n_wefe else None
        if python is not None:
            queries = wefe_inputs(entries[:n_wefe], spaces[0], folder)
        run_weatkit(path, spaces[:1], METRICS, bare, subset[:2] or None)  # warm-up (imports)
        for r in range(args.rounds):
            loads.append(os.getloadavg()[0])
            result, seconds = timed(lambda: run_weatkit(path, spaces, METRICS, full))
            times["all"].append(seconds)
            if python is not None:
                six, seconds = timed(lambda: run_weatkit(path, spaces[:1], WEFE_HAS, bare, subset))
                times["six"].append(seconds)
                answer = run_wefe(python, folder)
                times["wefe"].append(answer["seconds"])
                agreement = largest_difference(six, queries, answer["values"])
            done = ", ".join(f"{k} {v[-1]:.2f} s" for k, v in times.items() if v)
            print(f"round {r + 1}: {done}; {load()}", file=sys.stderr)
    figures = summary(args, device, n_jobs, n_wefe, times, result)
    if n_wefe:
        figures[-1].note += f"; {agreement}"
    print_table("Association metrics: the CA-WEAT paper's grid", figures)
    starts = ", ".join(f"{x:.1f}" for x in loads)
    print(
        f"\nmedians of {args.rounds} alternated rounds; 1-min load average at the rounds' "
        f"starts: {starts}; {load()} at the end"
    )


def summary(
    args: argparse.Namespace,
    device: str,
    n_jobs: int,
    n_wefe: int,
    times: dict[str, list[float]],
    result: RunResult,
) -> list[Figure]:
    """The table's rows from the rounds' times (medians)."""
    grid_text = f"{n_jobs:,} queries, {args.dim}-d"
    ours = statistics.median(times["all"])
    figures = [
        Figure(
            f"every metric ({', '.join(METRICS)}) with B={args.bootstrap:,} bootstrap CIs, "
            f"P={args.permutations:,}; {grid_text}, {device}",
            ours,
            note=f"{len(result.association):,} association rows, {len(result.results):,} WEATs",
        )
    ]
    if n_wefe:
        per_query = statistics.median(times["wefe"]) / n_wefe
        wefe_grid = per_query * n_jobs
        scaled = "" if n_wefe == n_jobs else f", scaled from {n_wefe:,} queries"
        figures.append(
            Figure(
                f"the same run; {grid_text}",
                ours,
                baseline_name=f"WEFE 1.0.1 per-query loop, 6 metrics, no CIs{scaled}",
                baseline=wefe_grid,
                note="weatkit also computes CIs, SC-WEAT and DirectBias; WEFE has no CIs",
            )
        )
        six = statistics.median(times["six"])
        figures.append(
            Figure(
                f"the 6 metrics WEFE has, no bootstrap, {n_wefe:,} queries of one space, {device}",
                six,
                baseline_name="WEFE 1.0.1 per-query loop, same queries",
                baseline=statistics.median(times["wefe"]),
                note="weatkit: one run (the list file, OOV checks, tables included)",
            )
        )
    return figures


if __name__ == "__main__":
    t0 = time.perf_counter()
    main()
    print(f"total {time.perf_counter() - t0:.0f} s", file=sys.stderr)
