"""Training controlled in-house static embeddings with fastText (the CA-WEAT paper's CCe models).

España-Bonet & Barrón-Cedeño (EMNLP 2022, §4) train their own embeddings on CC-100 so that the
amount and domain of the data are the same for every language: each corpus is capped to the
size of the smallest one (Catalan, 1.7·10⁹ words, Appendix D) and fastText is trained with the
CCWP hyperparameters (CBOW, 300 dimensions, character 5-grams, window 5, 10 negatives). Three
ways to reach multilinguality are compared, all available here as ``joint``:

* ``"none"`` — **CCe**: one monolingual model per language;
* ``"bilingual"`` — **CCe2langs**: for every language L other than the pivot (English), one model
  trained on the concatenation of the capped pivot corpus and the capped L corpus;
* ``"multilingual"`` — **CCe9langs**: one model on the concatenation of all capped corpora.

Corpora are UTF-8 text, plain or compressed (``.gz``, ``.bz2``, ``.xz``, chosen by suffix), read
as a stream of lines (memory is bounded by the longest line). Words are what fastText sees:
tokens separated by ASCII whitespace. The output is a word2vec text file (``.vec``, optionally
compressed by its suffix) holding every word of the model's dictionary (fastText's end-of-line
token ``</s>`` included), an optional fastText ``.bin`` for sub-word vectors of OOV words
(``--fasttext-oov``), and a ``<vectors>.train.json`` sidecar with the options, corpus
fingerprints, words used and versions.

One module per step: :mod:`~weatkit.training.options` (what to train, what was trained),
:mod:`~weatkit.training.corpus` (reading, counting, capping), :mod:`~weatkit.training.plan`
(which models, which files), :mod:`~weatkit.training.fit` (fastText),
:mod:`~weatkit.training.output` and :mod:`~weatkit.training.staging` (writing atomically),
:mod:`~weatkit.training.train` (the whole run).

Example:
    >>> from weatkit.training import TrainOptions, train_embeddings
    >>> report = train_embeddings(  # doctest: +SKIP
    ...     {"en": "cc.en.txt.xz", "ca": "cc.ca.txt.xz", "de": "cc.de.txt.xz"},
    ...     "vecs/cce2langs.{lang}.vec",
    ...     TrainOptions(threads=16),
    ...     joint="bilingual",
    ...     cap_to_smallest=True,
    ... )
    >>> report.paths["de"]  # doctest: +SKIP
    PosixPath('vecs/cce2langs.de.vec')
"""

from __future__ import annotations

from weatkit.training.corpus import cap_corpus, count_words, iter_lines
from weatkit.training.fit import import_fasttext
from weatkit.training.options import (
    JOINT_MODES,
    LANG_PLACEHOLDER,
    MODELS,
    POSITION_WEIGHTS_NOTE,
    TrainedModel,
    TrainOptions,
    TrainReport,
    check_language,
    check_placeholders,
)
from weatkit.training.output import write_vectors
from weatkit.training.plan import binary_path, metadata_path
from weatkit.training.train import train_embeddings

__all__ = [
    "JOINT_MODES",
    "LANG_PLACEHOLDER",
    "MODELS",
    "POSITION_WEIGHTS_NOTE",
    "TrainOptions",
    "TrainReport",
    "TrainedModel",
    "binary_path",
    "cap_corpus",
    "check_language",
    "check_placeholders",
    "count_words",
    "import_fasttext",
    "iter_lines",
    "metadata_path",
    "train_embeddings",
    "write_vectors",
]
