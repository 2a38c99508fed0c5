"""Load static word embeddings from files, keeping only the words a run needs.

Formats (``fmt="auto"`` decides by extension after stripping ``.gz``/``.bz2``/``.xz``):

=================  ==================================================================
``text``           word2vec/fastText/GloVe text, ``.vec``/``.txt`` (``N DIM`` header optional)
``word2vec-bin``   word2vec binary ``.bin`` (streamed)
``fasttext-bin``   fastText ``.bin`` model (via gensim; sub-word vectors for OOV words)
``kv``             gensim ``KeyedVectors.save`` file ``.kv`` (pickle: needs ``allow_pickle``)
``npy``            ``.npy`` matrix + vocabulary file (memory-mapped)
``spacy``          a spaCy pipeline's vector table, a folder (:mod:`.spacy_format`)
=================  ==================================================================

A ``.bin`` file is a fastText model if it starts with the fastText magic number, else word2vec.
A folder is read as a spaCy vector table.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from weatkit.embeddings.binary_formats import (
    is_fasttext_bin,
    load_fasttext_bin,
    load_keyed_vectors,
    load_word2vec_bin,
)
from weatkit.embeddings.loader_utils import (
    check_exists,
    check_first_n,
    default_name,
    needed_words,
    reading,
    split_compression,
)
from weatkit.embeddings.npy_format import load_npy
from weatkit.embeddings.spacy_format import load_spacy
from weatkit.embeddings.text_format import load_text
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError

#: Canonical format names.
FORMATS = ("text", "word2vec-bin", "fasttext-bin", "kv", "npy", "spacy")

_ALIASES = {
    "auto": "auto",
    "text": "text",
    "vec": "text",
    "txt": "text",
    "word2vec": "text",
    "word2vec-text": "text",
    "fasttext-text": "text",
    "glove": "text",
    "bin": "bin",
    "word2vec-bin": "word2vec-bin",
    "word2vec-binary": "word2vec-bin",
    "fasttext-bin": "fasttext-bin",
    "fasttext": "fasttext-bin",
    "kv": "kv",
    "gensim": "kv",
    "npy": "npy",
    "spacy": "spacy",
}

_BY_EXTENSION = {
    ".vec": "text",
    ".txt": "text",
    ".bin": "bin",
    ".kv": "kv",
    ".npy": "npy",
}


def _sniff(path: Path) -> str:
    """Guess the format of a file whose extension says nothing (or ``.bin``)."""
    with reading(path) as f:
        head = f.read(8)
    if is_fasttext_bin(head):
        return "fasttext-bin"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head[:1] == b"\x80":  # pickle protocol >= 2
        return "kv"
    return "text"


def detect_format(path: str | os.PathLike, fmt: str = "auto") -> str:
    """The canonical format for ``path`` (one of :data:`FORMATS`); ``fmt`` may be an alias.

    ``.bin`` files are sniffed: the fastText magic number means ``fasttext-bin``, anything else
    ``word2vec-bin``. Unknown extensions are sniffed too (fastText, numpy, pickle, else text).
    A folder is ``spacy``.
    """
    key = str(fmt).strip().lower()
    if key not in _ALIASES:
        raise WeatkitError(
            f"unknown embeddings format {fmt!r}; use one of auto, {', '.join(FORMATS)}"
        )
    canonical = _ALIASES[key]
    p = Path(path)
    if canonical == "auto" and p.is_dir():
        return "spacy"
    if canonical == "auto":
        base, _ = split_compression(p)
        canonical = _BY_EXTENSION.get(base.suffix.lower(), "sniff")
    if canonical in ("bin", "sniff"):
        check_exists(p)
        sniffed = _sniff(p)
        if canonical == "bin":
            return "fasttext-bin" if sniffed == "fasttext-bin" else "word2vec-bin"
        return sniffed
    return canonical


def load_static(
    path: str | os.PathLike,
    *,
    words: Iterable[str] | None = None,
    first_n: int = 0,
    fmt: str = "auto",
    name: str | None = None,
    allow_pickle: bool = False,
    fasttext_oov: bool = False,
    vocab_path: str | os.PathLike | None = None,
) -> WordVectors:
    """Load static embeddings from ``path``, keeping only what is needed.

    Args:
        path: the embeddings file (see the module docstring for formats and compression), or a
            spaCy vector table's folder.
        words: keep only these words (plus the first ``first_n`` rows); ``None`` keeps all rows.
            Words that are not in the file are simply absent from the result.
        first_n: also keep the first ``first_n`` rows of the file, in file order.
        fmt: ``"auto"`` or one of :data:`FORMATS`.
        name: the result's name; default: the file stem (``wiki.en.vec.gz`` -> ``wiki.en``).
        allow_pickle: allow gensim ``.kv`` files (pickles can run code when loaded).
        fasttext_oov: for fastText models, build vectors of missing ``words`` from sub-words.
        vocab_path: vocabulary of a ``.npy`` matrix (default: a sibling ``<stem>.vocab`` ...).

    Returns:
        WordVectors whose rows are in file order (fastText OOV words last), ``source`` = path and
        ``n_rows_in_source`` = the number of rows in the file (the header's N when there is one;
        -1 when a headerless text file was not read to the end because everything was found).

    Raises:
        WeatkitError: missing/unreadable file, malformed or non-UTF-8 line, wrong dimension,
            NaN/inf in a kept row, all-zero vector of a needed word, truncated file, empty file.
            Duplicate words keep their first occurrence (a warning is logged on
            ``weatkit.embeddings``).
    """
    needed = needed_words(words)
    first_n = check_first_n(first_n)
    kind = detect_format(path, fmt)
    if kind == "spacy":
        if not Path(path).exists():
            raise WeatkitError(f"embeddings folder not found: {path}")
        label = name if name is not None else Path(path).resolve().name
        return load_spacy(path, needed=needed, first_n=first_n, name=label)
    p = check_exists(path)
    label = name if name is not None else default_name(p)
    if kind == "text":
        return load_text(p, needed=needed, first_n=first_n, name=label)
    if kind == "word2vec-bin":
        return load_word2vec_bin(p, needed=needed, first_n=first_n, name=label)
    if kind == "fasttext-bin":
        return load_fasttext_bin(
            p, needed=needed, first_n=first_n, name=label, fasttext_oov=fasttext_oov
        )
    if kind == "kv":
        return load_keyed_vectors(
            p,
            needed=needed,
            first_n=first_n,
            name=label,
            allow_pickle=allow_pickle,
            fasttext_oov=fasttext_oov,
        )
    return load_npy(p, needed=needed, first_n=first_n, name=label, vocab_path=vocab_path)


__all__ = ["FORMATS", "detect_format", "load_static"]
