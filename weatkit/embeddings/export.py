"""Writing word vectors as a word2vec text (``.vec``) file for other tools."""

from __future__ import annotations

import io

import numpy as np

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
