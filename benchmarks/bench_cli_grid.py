"""Time the CA-WEAT paper's grid through the command line, the whole process: start-up, imports,
loading, engine, tables.

16 embeddings entries name the same generated 300-d file per language (the X-WEAT and CA-WEAT
v1 items of the 9 X-WEAT languages, as ``bench_grid.py`` writes them; about 15 MB in all):
``weatkit run --lists x-weat,ca-weat --test weat1,weat2`` runs 2 tests × 91 lists × 16
embeddings = 2,912 WEATs with 5,000 bootstraps and 10,000 permutations each.

Each ``--code`` directory (a checkout: put first on ``PYTHONPATH``) runs once per round, in
turn, so that versions compared see the same machine load; the load average is printed beside
each time, with the process's CPU time (less sensitive to other processes on a shared machine)
and the loading and engine times of its manifest; every version's ``results.csv`` must be
identical. At the end, per version: the median wall and CPU time over the rounds, and the range
of load averages they ran under.

``--with "OPTIONS"`` also runs each version with those options, in the same rounds, and prints
the median of the per-round ratios (with / plain). ``--vocabulary N`` starts each language's
file with wordfreq's top N words of the language, in frequency order, so that ``--null`` has
candidates to draw (the plain paper grid's files hold the list items only).

    python benchmarks/bench_cli_grid.py --code /path/to/before --code . [--rounds 2]
    python benchmarks/bench_cli_grid.py --code . --vocabulary 20000 --rounds 5 \
        --with "--influence --null 1000 --pool lists,languages"
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_grid import LANGS, write_spaces


def command(root: Path, out: Path, n_entries: int, extra: list[str]) -> list[str]:
    entries = [f"--embeddings=S{i}={root / 'space0.{lang}.vec'}" for i in range(n_entries)]
    return [
        sys.executable, "-m", "weatkit", "run", "--lists", "x-weat,ca-weat", "--lang",
        ",".join(LANGS), "--test", "weat1,weat2", *entries, "--no-progress", "--format", "csv",
        "--out", str(out), "--force", *extra,
    ]  # fmt: skip


def same_numbers(table: bytes, first: bytes) -> None:
    """The results of two versions agree: p-values and text bit for bit, the rest to 1e-12
    (a change in the order of a sum moves the last bit of an interval bound)."""
    import io

    import numpy as np
    import pandas as pd

    a, b = (pd.read_csv(io.BytesIO(t), keep_default_na=False) for t in (table, first))
    assert a.columns.tolist() == b.columns.tolist() and len(a) == len(b), "other tables"
    for column in a.columns:
        x, y = a[column], b[column]
        if x.dtype.kind == "f" and not column.startswith("p_"):
            assert np.allclose(x, y, rtol=0, atol=1e-12, equal_nan=True), column
        else:
            assert x.equals(y), f"results differ between versions: {column}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--code", action="append", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--entries", type=int, default=16)
    parser.add_argument("--vocabulary", type=int, default=0)
    parser.add_argument("--with", dest="options", default="", help="options to pair against")
    parser.add_argument("extra", nargs="*", help="more options for weatkit run (after --)")
    args = parser.parse_args()
    variants = [("plain", args.extra)]
    if args.options:
        variants.append(("with", [*args.extra, *shlex.split(args.options)]))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_spaces(root, 1, 0, args.vocabulary)
        results: dict[tuple[Path, str], bytes] = {}
        runs: dict[tuple[Path, str], list[tuple[float, float, float]]] = {
            (code, name): [] for code in args.code for name, _ in variants
        }
        for r in range(args.rounds):
            for code in args.code:
                for name, extra in variants:
                    out = root / f"out-{len(results)}"
                    env = {**os.environ, "PYTHONPATH": str(code.resolve())}
                    load = os.getloadavg()[0]
                    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    t0 = time.perf_counter()
                    subprocess.run(
                        command(root, out, args.entries, extra),
                        env=env,
                        cwd=root,  # not the caller's folder: python -m puts it before PYTHONPATH
                        check=True,
                        stdout=subprocess.DEVNULL,
                    )
                    seconds = time.perf_counter() - t0
                    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
                    cpu = cpu1.ru_utime - cpu0.ru_utime + cpu1.ru_stime - cpu0.ru_stime
                    timings = json.loads((out / "manifest.json").read_text())["timings_s"]
                    loading = sum(v for k, v in timings.items() if k.startswith("load:"))
                    print(
                        f"round {r + 1}  {code} {name}: {seconds:.2f} s, CPU {cpu:.2f} s (load "
                        f"average {load:.2f}); manifest: loading {loading:.2f} s, engine "
                        f"{timings.get('engine', 0):.2f} s, run {timings['total']:.2f} s"
                    )
                    runs[(code, name)].append((seconds, cpu, load))
                    table = (out / "results.csv").read_bytes()
                    assert results.setdefault((code, name), table) == table
                    first = next(v for (_, n), v in results.items() if n == name)
                    same_numbers(table, first)
    print("\n| code | options | median wall | median CPU | load averages | rounds |")
    print("|---|---|---|---|---|---|")
    for (code, name), measured in runs.items():
        wall, cpu = (statistics.median(m[i] for m in measured) for i in range(2))
        loads = f"{min(m[2] for m in measured):.2f}–{max(m[2] for m in measured):.2f}"
        label = args.options if name == "with" else "plain"
        print(f"| {code} | {label} | {wall:.2f} s | {cpu:.2f} s | {loads} | {len(measured)} |")
    if args.options:
        for code in args.code:
            pairs = zip(runs[(code, "with")], runs[(code, "plain")], strict=True)
            ratio = statistics.median(w[0] / p[0] for w, p in pairs)
            print(f"{code}: with / plain, median of the rounds' wall-time ratios: {ratio:.2f}×")

if __name__ == "__main__":
    main()
