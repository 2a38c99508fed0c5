"""Time ``weatkit grid`` on a paper-sized static grid: first run, resume, one changed file.

Spaces: ``--spaces`` generated 300-d spaces per language (random vectors for every X-WEAT and
CA-WEAT v1 item of the 9 X-WEAT languages, plus ``--filler`` extra rows so that each file has
a realistic size to read), the second and later ones declared with ``baseline`` = the first,
so the grid also computes paired differences. The paper's resampling: 5,000 bootstraps and
10,000 permutations per test.

Figures printed:

* grid, first run (every job), against one ``weatkit.pipeline.run`` over the same spaces and
  languages (the cost of splitting into resumable jobs);
* rerun with nothing to do (plan with every file fingerprinted again + reading the finished
  jobs + writing the tables);
* rerun after one vector file changed (only that language's jobs of that space);
* with ``--ray CPUS``: the first run on a local Ray instance of CPUS CPUs (``weatkit[ray]``)
  against the local executor, the tables checked identical.

    python benchmarks/bench_grid.py [--spaces 4] [--filler 20000] [--device auto] [--ray 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from common import Figure, print_table

from weatkit._io.fingerprint import _fingerprint_by_stat
from weatkit.grid import GridConfig, RayExecutor, load_grid_config, run_grid
from weatkit.lists.sources import select_lists
from weatkit.pipeline import run

LANGS = ("en", "ar", "ca", "de", "es", "hr", "it", "ru", "tr")
LISTS = ["x-weat", "ca-weat"]
DIM = 300


def write_spaces(root: Path, n_spaces: int, filler: int, vocabulary: int = 0) -> None:
    """``vocabulary`` > 0: each language's file starts with wordfreq's top ``vocabulary`` words
    of the language, in frequency order as a real space's rows are (what ``--null`` draws
    from), then the list items not among them."""
    rng = np.random.default_rng(0)
    for lang in LANGS:
        tests = select_lists(LISTS, (lang,)).tests
        words = sorted(set().union(*(t.vocabulary() for t in tests)))
        if vocabulary:
            import wordfreq

            top = [w for w in wordfreq.top_n_list(lang, vocabulary) if " " not in w]
            words = top + sorted(set(words) - set(top))
        words += [f"filler{i}" for i in range(filler)]
        base = rng.standard_normal((len(words), DIM)).astype(np.float32)
        for s in range(n_spaces):
            vectors = base + 0.5 * s * rng.standard_normal(base.shape).astype(np.float32)
            with open(root / f"space{s}.{lang}.vec", "w", encoding="utf-8") as fh:
                fh.write(f"{len(words)} {DIM}\n")
                for word, row in zip(words, vectors, strict=True):
                    fh.write(word + " " + " ".join(f"{x:.5f}" for x in row) + "\n")


def experiment(root: Path, n_spaces: int, device: str) -> Path:
    spaces = [{"name": "space0", "path": "space0.{lang}.vec"}]
    spaces += [
        {"name": f"space{s}", "path": f"space{s}.{{lang}}.vec", "baseline": "space0"}
        for s in range(1, n_spaces)
    ]
    config = {
        "output": "out",
        "languages": list(LANGS),
        "lists": LISTS,
        "tests": ["weat1", "weat2"],
        "engine": {"n_bootstrap": 5000, "n_permutations": 10000, "seed": 0, "device": device},
        "embeddings": spaces,
    }
    path = root / "experiment.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    """Wall time of ``fn()``, without fingerprints remembered from an earlier call (as in a new
    process)."""
    _fingerprint_by_stat.cache_clear()
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spaces", type=int, default=4)
    parser.add_argument("--filler", type=int, default=20_000)
    parser.add_argument("--device", default="auto")
    parser.add_argument(
        "--ray", type=int, default=0, metavar="CPUS", help="also run on a local Ray instance"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_spaces(root, args.spaces, args.filler)
        config = load_grid_config(experiment(root, args.spaces, args.device))
        first, t_first = timed(lambda: run_grid(config, show_progress=False))
        n_jobs = len(first.manifest["jobs"])
        direct_config = replace(
            config.run, embeddings=tuple(s.spec for s in config.sources), langs=LANGS
        )
        _, t_direct = timed(lambda: run(direct_config, show_progress=False))
        _, t_resume = timed(lambda: run_grid(config, show_progress=False))
        changed = root / "space1.de.vec"
        with open(changed, "a", encoding="utf-8") as fh:
            fh.write("extra " + " ".join(["0.1"] * DIM) + "\n")
        again, t_changed = timed(lambda: run_grid(config, show_progress=False))
        reran = [j["id"] for j in again.manifest["jobs"] if j["status"] == "ran"]
        size = sum(p.stat().st_size for p in root.glob("*.vec")) / 2**20
        figures = [
            Figure(
                f"grid, first run ({n_jobs} jobs)",
                t_first,
                "s",
                "one pipeline.run (no comparisons, no job records)",
                t_direct,
            ),
            Figure("rerun, every job finished", t_resume, "s", "first run", t_first),
            Figure(
                f"rerun after one file changed ({', '.join(reran)})",
                t_changed,
                "s",
                "first run",
                t_first,
            ),
        ]
        if args.ray:
            figures += ray_figures(config, root, args.ray, t_first)
    print_table(
        f"Grid: {args.spaces} spaces × {len(LANGS)} languages, {len(first.results)} WEATs + "
        f"{len(first.comparisons)} paired differences, {size:.0f} MB of .vec; B=5,000, P=10,000",
        figures,
    )


def ray_figures(config: GridConfig, root: Path, n_cpus: int, t_local: float) -> list[Figure]:
    """The grid's first run on a local Ray instance of ``n_cpus`` CPUs (tables checked equal)."""
    import ray

    t0 = time.perf_counter()
    ray.init(num_cpus=n_cpus, include_dashboard=False, logging_level="WARNING")
    t_init = time.perf_counter() - t0
    on_ray = replace(config, output=root / "out-ray")
    _, t_ray = timed(lambda: run_grid(on_ray, show_progress=False, executor=RayExecutor()))
    ray.shutdown()
    for name in ("results.csv", "summary.csv", "comparisons.csv"):
        assert (root / "out" / name).read_bytes() == (root / "out-ray" / name).read_bytes()
    return [
        Figure(
            f"grid, first run on Ray ({n_cpus} CPUs; + {t_init:.1f} s to start Ray)",
            t_ray,
            "s",
            "local executor, first run",
            t_local,
            note="identical tables",
        )
    ]


if __name__ == "__main__":
    main()
