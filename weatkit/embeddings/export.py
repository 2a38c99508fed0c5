"""Writing word vectors as a word2vec text (``.vec``) file for other tools, or as ``.npy``."""

from __future__ import annotations

import io
import os
from pathlib import Path

import numpy as np

from weatkit._io.atomic import write_file
from weatkit.embeddings.vectors import WordVectors
from weatkit.errors import WeatkitError


def vec_bytes(wv: WordVectors, *, phrase_joiner: str = "_") -> bytes:
    """The vectors in word2vec text format: a ``"n dim"`` header, then ``word v_1 ... v_dim``.

    Values are written with 9 significant digits, which round-trips float32 exactly. The format
    separates fields with spaces, so spaces inside multi-word items are replaced with
    ``phrase_joiner`` (``"machine gun"`` → ``"machine_gun"``, the phrase convention of static
    vectors).

    Raises:
        WeatkitError: two items that become the same word, or a word with a line break.
    """
    words = [w.replace(" ", phrase_joiner) for w in wv.words]
    seen: dict[str, str] = {}
    for original, word in zip(wv.words, words, strict=True):
        if not word or any(c in word for c in "\n\r\t"):
            raise WeatkitError(f"cannot write item {original!r} in a .vec file")
        if word in seen:
            raise WeatkitError(f"items {seen[word]!r} and {original!r} both become {word!r}")
        seen[word] = original
    out = io.StringIO()
    out.write(f"{len(words)} {wv.dim}\n")
    rows = np.asarray(wv.vectors, dtype=np.float32)
    for word, row in zip(words, rows, strict=True):
        out.write(word + " " + " ".join(f"{x:.9g}" for x in row.tolist()) + "\n")
    return out.getvalue().encode("utf-8")


def write_npy(wv: WordVectors, path: str | os.PathLike) -> tuple[Path, Path]:
    """Write ``wv`` as a ``.npy`` matrix (float32) and its vocabulary beside it, one word per
    line in row order (``wiki.fr.npy`` and ``wiki.fr.vocab``), each atomically: the format that
    :func:`weatkit.load_vectors` reads memory-mapped. Returns both paths.

    Raises:
        WeatkitError: ``path`` does not end in ``.npy``, a word that is empty or has a line break.
    """
    target = Path(path)
    if target.suffix != ".npy":
        raise WeatkitError(f"write_npy: {target} must end in .npy")
    for word in wv.words:
        if not word or "\n" in word or "\r" in word:
            raise WeatkitError(f"cannot write word {word!r} in a vocabulary file")
    matrix = io.BytesIO()
    np.save(matrix, np.asarray(wv.vectors, dtype=np.float32), allow_pickle=False)
    vocab = target.with_suffix(".vocab")
    return (
        write_file(target, matrix.getvalue()),
        write_file(vocab, "".join(w + "\n" for w in wv.words).encode("utf-8")),
    )
